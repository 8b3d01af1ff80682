package store

import (
	"maps"
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

// DecodeMeta reads every metadata object exactly as encoding/json does
// (decodeMetaJSON): plain strings by fastjson, the rest by encoding/json.
func FuzzDecodeMeta(f *testing.F) {
	// Shapes stored by ingest (from the real corpus's rows) and edge cases.
	for _, s := range []string{
		`{"attachment_type":"hook_success","tool_use_id":"68b32805-5602-4351-ab36-0fddd05d7e47"}`,
		`{"hook_count":"1","tool_use_id":"ff250054-b695-4ebb-9f09-86d58db4f3f5"}`,
		`{"model":"claude-opus-4-5","sidechain":true,"version":"2.0.76"}`,
		`{"exit_code":1,"nested":{"b":1,"a":[1,2.50,"x"]}}`,
		`{"k":"caf\u00e9 \ud83d\ude00 \ud800"}`, `{"k":"a\"b\\c\n"}`, `{"a":"1","a":"2"}`,
		`{}`, `null`, `[]`, `"x"`, `{"a":`, `{"a":"1"} x`, "{\"a\":\"\xff\"}", `{"a":1e400}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := DecodeMeta(s), decodeMetaJSON(s)
		if s == "" {
			want = nil
		}
		if (got == nil) != (want == nil) || !maps.Equal(got, want) {
			t.Fatalf("DecodeMeta(%q) = %#v, want %#v", s, got, want)
		}
	})
}

// go test -run '^$' -bench DecodeMeta ./store
func BenchmarkDecodeMeta(b *testing.B) {
	const s = `{"attachment_type":"hook_success","hook_event":"PostToolUse","tool_use_id":"68b32805-5602-4351-ab36-0fddd05d7e47"}`
	b.Run("fastjson", func(b *testing.B) {
		for b.Loop() {
			DecodeMeta(s)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			decodeMetaJSON(s)
		}
	})
}
