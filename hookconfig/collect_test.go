package hookconfig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

// write creates a file (and its folders) under dir.
func write(t *testing.T, dir, rel, data string) string {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const goodClaude = `{"hooks":{"SessionStart":[{"matcher":"","hooks":[{"type":"command","command":"a"},{"type":"command","command":"b"}]}]}}`

// collectFixture builds a temp HOME and project with good, bad, odd and
// missing files; it returns the sources to collect.
func collectFixture(t *testing.T) (home, proj string, srcs []Source) {
	t.Helper()
	home = t.TempDir()
	proj = filepath.Join(t.TempDir(), "proj")
	write(t, home, ".claude/settings.json", goodClaude)
	write(t, home, ".claude/settings.local.json", `{"permissions":{"allow":["Bash(ls:*)"]}}`)
	write(t, home, ".codex/hooks.json", "{\n  \"hooks\": {\n    \"Stop\": [\n")
	toml, err := os.ReadFile(filepath.Join("testdata", "codex", "config-hooks-state.toml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, home, ".codex/config.toml", string(toml))
	write(t, home, ".gemini/settings.json",
		`{"hooks":{"enabled":true,"BeforeTool":[{"matcher":"*","hooks":[{"name":"bad","type":"command","command":"x\u0007"},{"name":"ok","type":"command","command":"y"}]}]}}`)
	write(t, proj, ".claude/settings.json", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"`+strings.Repeat("z", MaxFileBytes)+`"}]}]}}`)
	if err := os.MkdirAll(filepath.Join(proj, ".gemini", "settings.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, proj, ".codex/hooks.json", `{"hooks":{"PostToolUse":[{"matcher":null,"hooks":[{"type":"command","command":"p","timeout":30}]}]}}`)
	srcs = Sources(home, []string{proj})
	// A file that vanished between listing and reading.
	srcs = append(srcs, Source{Path: filepath.Join(proj, ".codex", "config.toml"), Kind: KindCodexConfig,
		Tool: cortex.ToolCodex, Scope: ScopeProject, Project: proj})
	return home, proj, srcs
}

func TestCollect(t *testing.T) {
	home, proj, srcs := collectFixture(t)
	hooks, results := Collect(t.Context(), srcs)

	type res struct {
		hooks  int
		errHas string
	}
	want := map[string]res{
		filepath.Join(home, ".claude", "settings.json"):       {2, ""},
		filepath.Join(home, ".claude", "settings.local.json"): {0, ""},
		filepath.Join(home, ".codex", "hooks.json"):           {0, "invalid JSON at line 4"},
		filepath.Join(home, ".codex", "config.toml"):          {5, ""},
		filepath.Join(home, ".gemini", "settings.json"):       {1, "hooks.BeforeTool[0].hooks[0].command holds control characters"},
		filepath.Join(proj, ".claude", "settings.json"):       {0, "over the 4194304-byte (4 MiB) limit"},
		filepath.Join(proj, ".codex", "hooks.json"):           {1, ""},
		filepath.Join(proj, ".codex", "config.toml"):          {0, "file not found"},
		filepath.Join(proj, ".gemini", "settings.json"):       {0, "not a regular file"},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(results), len(want), results)
	}
	total := 0
	for _, r := range results {
		w, ok := want[r.Path]
		if !ok {
			t.Errorf("unexpected result %+v", r)
			continue
		}
		if r.Hooks != w.hooks {
			t.Errorf("%s: %d hooks, want %d", r.Path, r.Hooks, w.hooks)
		}
		switch {
		case w.errHas == "" && r.Error != "":
			t.Errorf("%s: unexpected error %q", r.Path, r.Error)
		case w.errHas != "" && !strings.Contains(r.Error, w.errHas):
			t.Errorf("%s: error %q lacks %q", r.Path, r.Error, w.errHas)
		case w.errHas != "" && !strings.Contains(r.Error, r.Path):
			t.Errorf("%s: error %q does not name the file", r.Path, r.Error)
		}
		total += r.Hooks
	}
	if !slices.IsSortedFunc(results, func(a, b FileResult) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("results not sorted by path: %+v", results)
	}
	if len(hooks) != total {
		t.Fatalf("%d hooks, results count %d", len(hooks), total)
	}
	// Hooks follow the results' order, then their Index.
	var order []string
	for _, r := range results {
		for range r.Hooks {
			order = append(order, r.Path)
		}
	}
	for i, h := range hooks {
		if h.Source.Path != order[i] {
			t.Errorf("hook %d from %s, want %s", i, h.Source.Path, order[i])
		}
		if i > 0 && h.Source.Path == hooks[i-1].Source.Path && h.Index != hooks[i-1].Index+1 {
			t.Errorf("hook %d: Index %d after %d", i, h.Index, hooks[i-1].Index)
		}
	}

	// Deterministic whatever the input order.
	rev := slices.Clone(srcs)
	slices.Reverse(rev)
	hooks2, results2 := Collect(context.Background(), rev)
	if fmt.Sprint(results2) != fmt.Sprint(results) || fmt.Sprint(hooks2) != fmt.Sprint(hooks) {
		t.Error("Collect output depends on the input order")
	}
}

func TestCollectCancelled(t *testing.T) {
	_, _, srcs := collectFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	hooks, results := Collect(ctx, srcs)
	if len(hooks) != 0 {
		t.Errorf("%d hooks after cancellation", len(hooks))
	}
	if len(results) != len(srcs) {
		t.Fatalf("%d results for %d sources", len(results), len(srcs))
	}
	for _, r := range results {
		if !strings.Contains(r.Error, "not read: collection cancelled") || r.Hooks != 0 {
			t.Errorf("%+v: want a cancelled result", r)
		}
	}
}

func TestCollectEmpty(t *testing.T) {
	hooks, results := Collect(t.Context(), nil)
	if len(hooks) != 0 || len(results) != 0 {
		t.Errorf("got %v %v", hooks, results)
	}
}

func TestSources(t *testing.T) {
	home := t.TempDir()
	projA := filepath.Join(t.TempDir(), "a")
	projB := filepath.Join(t.TempDir(), "b")
	write(t, home, ".claude/settings.json", "{}")
	write(t, home, ".codex/config.toml", "")
	write(t, projA, ".claude/settings.local.json", "{}")
	write(t, projA, ".codex/hooks.json", "{}")
	write(t, projA, ".gemini/settings.json", "{}")
	// .codex is a file in B: its children cannot exist.
	write(t, projB, ".codex", "not a folder")
	write(t, projB, ".claude/settings.json", "{}")
	link := filepath.Join(t.TempDir(), "a-link")
	if err := os.Symlink(projA, link); err != nil {
		t.Fatal(err)
	}

	got := Sources(home, []string{projA, home, "", projA + string(filepath.Separator), link, projB, projA})
	want := []Source{
		{Path: filepath.Join(home, ".claude", "settings.json"), Kind: KindClaudeSettings, Tool: cortex.ToolClaude, Scope: ScopeUser},
		{Path: filepath.Join(home, ".codex", "config.toml"), Kind: KindCodexConfig, Tool: cortex.ToolCodex, Scope: ScopeUser},
		{Path: filepath.Join(projA, ".claude", "settings.local.json"), Kind: KindClaudeSettings, Tool: cortex.ToolClaude, Scope: ScopeProject, Project: projA},
		{Path: filepath.Join(projA, ".codex", "hooks.json"), Kind: KindCodexHooks, Tool: cortex.ToolCodex, Scope: ScopeProject, Project: projA},
		{Path: filepath.Join(projA, ".gemini", "settings.json"), Kind: KindGeminiSettings, Tool: cortex.ToolGemini, Scope: ScopeProject, Project: projA},
		{Path: filepath.Join(projB, ".claude", "settings.json"), Kind: KindClaudeSettings, Tool: cortex.ToolClaude, Scope: ScopeProject, Project: projB},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Sources:\n got %+v\nwant %+v", got, want)
	}

	if got := Sources("", nil); len(got) != 0 {
		t.Errorf("Sources of nothing: %+v", got)
	}
	if got := Sources(filepath.Join(home, "missing"), []string{filepath.Join(home, "nope")}); len(got) != 0 {
		t.Errorf("Sources of missing folders: %+v", got)
	}

	// A relative project is made absolute.
	t.Chdir(filepath.Dir(projA))
	got = Sources("", []string{"a"})
	if len(got) != 3 || got[0].Project != projA || !filepath.IsAbs(got[0].Path) {
		t.Errorf("relative project: %+v", got)
	}
}

// TestSourcesThenCollect is the end-to-end path: list a HOME, collect it.
func TestSourcesThenCollect(t *testing.T) {
	home := t.TempDir()
	write(t, home, ".claude/settings.json", goodClaude)
	write(t, home, ".gemini/settings.json", `{"hooks":{"SessionStart":[{"hooks":[{"name":"s","type":"command","command":"go run x"}]}]}}`)
	hooks, results := Collect(t.Context(), Sources(home, []string{home}))
	if len(results) != 2 || len(hooks) != 3 {
		t.Fatalf("results %+v, %d hooks", results, len(hooks))
	}
	for _, h := range hooks {
		if h.Source.Scope != ScopeUser || h.EvidenceKind != cortex.EvidenceConfig || h.Status != cortex.HookConfigured {
			t.Errorf("hook %+v", h)
		}
	}
	if hooks[0].HookSource != "claude:user:settings.json" || hooks[2].HookSource != "gemini:user:settings.json" ||
		hooks[2].Meta["name"] != "s" {
		t.Errorf("hooks %+v", hooks)
	}
}
