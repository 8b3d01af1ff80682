package app

import (
	"context"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

func TestRegistryIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	routes := map[string]bool{}
	for _, a := range Actions() {
		if seen[a.Name] || routes[a.Method+a.Path] {
			t.Errorf("duplicate action or route: %s %s %s", a.Name, a.Method, a.Path)
		}
		seen[a.Name], routes[a.Method+a.Path] = true, true
		if a.Description == "" || a.CLI == "" || (a.Scope != ScopeRead && a.Scope != ScopeAdmin) {
			t.Errorf("%s: incomplete declaration %+v", a.Name, a)
		}
		if (a.Cost == CostWrite) != (a.Method == "POST") {
			t.Errorf("%s: write actions (only) are POST", a.Name)
		}
		s := a.Schema()
		var props []string
		for name := range s.Properties {
			props = append(props, name)
		}
		if len(props) != len(a.Params()) {
			t.Errorf("%s: schema has %d properties, params %v", a.Name, len(props), a.Params())
		}
		for _, p := range a.Params() {
			if s.Properties[p] == nil || a.Doc(p) == "" {
				t.Errorf("%s: parameter %s has no documentation", a.Name, p)
			}
		}
		if a.ResultSchema() == nil {
			t.Errorf("%s: no result schema", a.Name)
		}
		if (a.Lens == "" && a.NotOnMCP == "" && a.Fold == nil) != a.OnMCP() || (a.Lens != "" && !strings.HasPrefix(a.MCPTool(), "in")) ||
			(a.NotOnMCP != "" && a.MCPTool() != "") || (a.Fold != nil && a.MCPTool() != a.Fold.Tool+" "+a.Fold.Param+"="+a.View) {
			t.Errorf("%s: lens %q, fold %v, MCP tool %q", a.Name, a.Lens, a.Fold, a.MCPTool())
		}
	}
	for _, want := range []string{"status", "search", "sessions", "skill_events", "skill_incidents", "skill_investigate",
		"skill_assess", "abuse", "abuse_incidents", "abuse_investigate", "mcp_events", "hook_events", "llm_invocations",
		"skills_backfill", "help", "incidents", "investigate"} {
		if !seen[want] {
			t.Errorf("action %s is missing", want)
		}
	}
}

// TestFolds checks the folded MCP tools: every view is an action served
// by its fold alone, the MCP call that reaches it says so, and help names
// it.
func TestFolds(t *testing.T) {
	views := map[string]string{}
	for _, f := range Folds() {
		if f.Tool == "" || f.Param == "" || f.Description == "" || len(f.Views) < 2 {
			t.Errorf("fold %+v is incomplete", f)
		}
		for _, v := range f.Views {
			a, ok := f.Action(v.Value)
			if !ok || a.Name != v.Action || a.Fold == nil || a.Fold.Tool != f.Tool || a.View != v.Value || a.OnMCP() {
				t.Errorf("%s %s=%s: action %+v", f.Tool, f.Param, v.Value, a)
			}
			if prev, dup := views[v.Action]; dup {
				t.Errorf("%s is a view of %s and %s", v.Action, prev, f.Tool)
			}
			views[v.Action] = f.Tool
			tool, args := a.MCPCall()
			if tool != f.Tool || !reflect.DeepEqual(args, map[string]any{f.Param: v.Value}) {
				t.Errorf("%s: MCP call %s %v", a.Name, tool, args)
			}
		}
		if _, ok := f.Action("nope"); ok {
			t.Errorf("%s: an unknown view has an action", f.Tool)
		}
	}
	for name, fold := range map[string]string{"skill_events": "events", "mcp_events": "events", "hook_events": "events",
		"abuse": "events", "skill_health": "skill", "skill_versions": "skill", "skill_compare": "skill",
		"skill_propose": "skill", "skill_evals": "skill"} {
		if views[name] != fold {
			t.Errorf("%s is served by %q, want %s", name, views[name], fold)
		}
	}
	help, _ := ActionByName("help")
	h, err := New(nil).Call(context.Background(), Caller{Scopes: []Scope{ScopeRead}}, help, &HelpParams{Action: "skill_health"})
	if err != nil || h.(Help).Actions[0].MCP != "skill view=health" {
		t.Errorf("help skill_health: %+v %v", h, err)
	}
}

func TestDecoding(t *testing.T) {
	a, err := ActionByName("skill_incidents")
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.DecodeQuery(url.Values{"signals": {"a,b", "c"}, "limit": {"5"}, "min_score": {"2.5"}, "include_usage": {"true"}})
	if err != nil {
		t.Fatal(err)
	}
	got := p.(*SkillIncidentsParams)
	if !reflect.DeepEqual(got.Signals, []string{"a", "b", "c"}) || got.Limit != 5 || got.MinScore != 2.5 || !got.IncludeUsage {
		t.Fatalf("query: %+v", got)
	}
	j, err := a.DecodeJSON([]byte(`{"signals":["a"],"limit":5,"skill":"x"}`))
	if err != nil || j.(*SkillIncidentsParams).Skill != "x" {
		t.Fatalf("json: %+v %v", j, err)
	}
	for _, tc := range []struct{ raw, want string }{
		{`[1]`, "must be a JSON object"},
		{`"x"`, "must be a JSON object"},
		{`{"limit":"5"}`, `"limit" must be an integer`},
		{`{"terms":["x"]}`, `unknown parameter "terms"`},
		{`{"tool":"claude","agent":"codex"}`, "not both"},
		{`{"limit":1}{}`, "one JSON object"},
		{`{"limit":`, "not valid JSON"},
	} {
		_, err := a.DecodeJSON([]byte(tc.raw))
		if cortex.ErrorCode(err) != cortex.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.raw, err, tc.want)
		}
	}
	// tool is the older name of agent, in JSON and in query strings.
	if p, err := a.DecodeJSON([]byte(`{"tool":"codex"}`)); err != nil || p.(*SkillIncidentsParams).Agent != "codex" {
		t.Fatalf("json alias: %+v %v", p, err)
	}
	if p, err := a.DecodeQuery(url.Values{"tool": {"gemini"}}); err != nil || p.(*SkillIncidentsParams).Agent != "gemini" {
		t.Fatalf("query alias: %+v %v", p, err)
	}
	if _, err := a.DecodeQuery(url.Values{"tool": {"gemini"}, "agent": {"codex"}}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Fatalf("both names: %v", err)
	}
	if a.Aliases()["tool"] != "agent" || slices.Contains(a.Params(), "tool") {
		t.Fatalf("aliases %v, params %v", a.Aliases(), a.Params())
	}
	if p, err := a.DecodeJSON(nil); err != nil || p == nil {
		t.Fatalf("empty arguments: %v", err)
	}
	if _, err := ActionByName("nope"); cortex.ErrorCode(err) != cortex.CodeNotFound || !strings.Contains(err.Error(), "skill_investigate") {
		t.Fatalf("unknown action: %v", err)
	}
}

func TestScopes(t *testing.T) {
	read := Caller{Scopes: []Scope{ScopeRead}}
	admin := Caller{Scopes: []Scope{ScopeAdmin}}
	if !read.Has(ScopeRead) || read.Has(ScopeAdmin) || !admin.Has(ScopeRead) || !admin.Has(ScopeAdmin) || (Caller{}).Has(ScopeRead) {
		t.Fatal("scope rules")
	}
	a, _ := ActionByName("llm_invocations")
	// Refused before any store access: the service has no store at all.
	if _, err := (&Service{}).Call(t.Context(), read, a, nil); cortex.ErrorCode(err) != cortex.CodeForbidden {
		t.Fatalf("read caller on an admin action: %v", err)
	}
}
