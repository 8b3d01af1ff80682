package store

import (
	"reflect"
	"testing"
)

func TestMatchSkillNames(t *testing.T) {
	names := []string{"entire:search", "search", "lavra:lavra-plan", "Research"}
	if got := MatchSkillNames(names, " Search "); !reflect.DeepEqual(got, []string{"entire:search", "search"}) {
		t.Errorf("got %v", got)
	}
	if got := MatchSkillNames(names, "lavra:lavra-plan"); !reflect.DeepEqual(got, []string{"lavra:lavra-plan"}) {
		t.Errorf("got %v", got)
	}
}

func TestDecodeMeta(t *testing.T) {
	m := DecodeMeta(`{"model":"x","exit_code":2,"sidechain":true}`)
	if m["model"] != "x" || m["exit_code"] != "2" || m["sidechain"] != "true" {
		t.Errorf("got %v", m)
	}
	for _, s := range []string{"", "[1]", "not json"} {
		if DecodeMeta(s) != nil {
			t.Errorf("DecodeMeta(%q) not nil", s)
		}
	}
}

func TestHookUsageAddConfig(t *testing.T) {
	var u HookUsage
	var rows []HookCandidate
	for _, s := range []string{"a", "b", "a", "", "c", "d", "e", "f"} {
		rows = append(rows, HookCandidate{Source: s})
	}
	u.AddConfig(rows)
	if u.ConfigRows != 8 || !reflect.DeepEqual(u.Sources, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("got %+v", u)
	}
}

func TestContentValid(t *testing.T) {
	for _, c := range []Content{ContentFull, ContentRedacted, ContentNone} {
		if !c.Valid() {
			t.Errorf("%s invalid", c)
		}
	}
	if Content("some").Valid() {
		t.Error("unknown level valid")
	}
}
