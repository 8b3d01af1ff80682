package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
)

// TestEventCommandsEndToEnd indexes the labelled sessions and lists their
// skill, tool-call and hook events through the real binary.
func TestEventCommandsEndToEnd(t *testing.T) {
	labelled := testcorpus.Labelled(t)
	e := newEnv(t)
	db := filepath.Join(e.home, "c.db")
	var sum struct {
		Events struct {
			Skills int `json:"skill_events"`
			Tools  int `json:"mcp_events"`
			Hooks  int `json:"hook_events"`
		} `json:"events"`
	}
	e.json(&sum, "--db", db, "index", labelled, "--json")
	if sum.Events.Skills == 0 || sum.Events.Tools == 0 || sum.Events.Hooks == 0 {
		t.Fatalf("index stored no events: %+v", sum.Events)
	}

	type list struct {
		Events    []map[string]any `json:"events"`
		Total     int              `json:"total"`
		Truncated bool             `json:"truncated"`
	}
	var skills list
	e.json(&skills, "--db", db, "ai", "skills", "--skill", "lavra:lavra-plan", "--json")
	if skills.Total == 0 {
		t.Fatal("no lavra:lavra-plan skill events")
	}
	for _, ev := range skills.Events {
		if ev["skill_name"] != "lavra:lavra-plan" || ev["skill_plugin"] != "lavra" || ev["ai_tool"] != "claude" {
			t.Errorf("skill event %v", ev)
		}
	}
	var summary list
	e.json(&summary, "--db", db, "ai", "skills", "--summary", "--json")
	names := map[string]bool{}
	for _, s := range summary.Events {
		names[s["skill_name"].(string)] = true
	}
	for _, want := range []string{"lavra:lavra-plan", "verify", "ops:deploy-helper", "worktree"} {
		if !names[want] {
			t.Errorf("skill summary lacks %s: %v", want, names)
		}
	}

	var mcp list
	e.json(&mcp, "--db", db, "ai", "mcp-events", "--server", "labby", "--errors", "--json")
	if mcp.Total < 2 {
		t.Fatalf("want the labby timeouts as failed MCP calls, got %d", mcp.Total)
	}
	for _, ev := range mcp.Events {
		if ev["mcp_tool"] != "search" || ev["status"] != "error" || ev["call_log_id"] == nil || ev["result_log_id"] == nil {
			t.Errorf("mcp event %v", ev)
		}
	}

	var hooks list
	e.json(&hooks, "--db", db, "ai", "hook-events", "--hook", "PostToolUse:Bash", "--status", "failed", "--json")
	if hooks.Total == 0 {
		t.Fatal("no failed PostToolUse:Bash hook runs")
	}
	for _, ev := range hooks.Events {
		if ev["evidence_kind"] != "runtime_transcript" {
			t.Errorf("hook event %v", ev)
		}
	}
	// A status that no hook run has is a mistake, not an empty list.
	if _, errOut, code := e.run("--db", db, "ai", "hook-events", "--status", "failure"); code != 2 ||
		!strings.Contains(errOut, `unknown hook status "failure"`) || !strings.Contains(errOut, "failed") {
		t.Errorf("hook-events --status failure: exit %d, %s", code, errOut)
	}

	// Human output is a table; bad filters are clear errors.
	out, _, code := e.run("--db", db, "ai", "mcp-events", "--limit", "3")
	if code != 0 || !strings.HasPrefix(out, "TIME") {
		t.Errorf("human mcp-events output:\n%s", out)
	}
	// --agent, and --tool, its older name.
	for _, flag := range []string{"--agent", "--tool"} {
		_, errOut, code := e.run("--db", db, "ai", "skills", flag, "cursor")
		if code != 2 || !strings.Contains(errOut, "unknown agent") {
			t.Errorf("bad %s: exit %d %s", flag, code, errOut)
		}
	}
	// A mistyped subcommand is a usage error with a suggestion.
	_, errOut, code := e.run("--db", db, "ai", "skil-incidents")
	if code != 2 || !strings.Contains(errOut, `did you mean "skill-incidents"`) {
		t.Errorf("mistyped subcommand: exit %d %s", code, errOut)
	}
	_, errOut, code = e.run("--db", db, "ai", "backfill")
	if code != 2 || !strings.Contains(errOut, "--all") {
		t.Errorf("backfill without kinds: exit %d %s", code, errOut)
	}
}

// configChanged is when the test's agent configuration files were last
// changed.
var configChanged = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestBackfillAndHookConfigEndToEnd(t *testing.T) {
	corpus := realCorpus(t)
	e := newEnv(t)
	// Agent configuration in the user's home, as the agents write it.
	for src, dst := range map[string]string{
		"claude/entireio-cli/config/.claude/settings.json":            ".claude/settings.json",
		"codex/entireio-skills/config/.codex/hooks.json":              ".codex/hooks.json",
		"gemini/entireio-cli/config/.gemini/settings.json":            ".gemini/settings.json",
		"codex/entireio-skills/config/.codex/config.toml":             ".codex/config.toml",
		"claude/planetfall-seed-signalkit/68/4e6d7327e9/0/full.jsonl": ".claude/projects/-p/s.jsonl",
	} {
		copyFile(t, filepath.Join(corpus, src), filepath.Join(e.home, dst))
		// Configured hooks are dated by their file, not by the index run.
		if strings.Contains(dst, "settings") || strings.Contains(dst, "hooks") || strings.Contains(dst, "config") {
			if err := os.Chtimes(filepath.Join(e.home, dst), configChanged, configChanged); err != nil {
				t.Fatal(err)
			}
		}
	}
	var idx struct {
		Events     map[string]int `json:"events"`
		HookConfig struct {
			Hooks    int `json:"hooks"`
			Inserted int `json:"inserted"`
		} `json:"hook_config"`
	}
	e.json(&idx, "index", "--json")
	if idx.HookConfig.Hooks == 0 || idx.HookConfig.Inserted != idx.HookConfig.Hooks {
		t.Errorf("index did not inventory the hook configuration: %+v", idx.HookConfig)
	}
	var cfg struct {
		Hooks     int `json:"hooks"`
		Inserted  int `json:"inserted"`
		Refreshed int `json:"refreshed"`
	}
	e.json(&cfg, "ai", "hooks", "collect-config", "--json")
	if cfg.Hooks != idx.HookConfig.Hooks || cfg.Inserted != 0 || cfg.Refreshed != cfg.Hooks {
		t.Errorf("second collection: %+v", cfg)
	}
	var configured struct {
		Events []map[string]any `json:"events"`
	}
	e.json(&configured, "ai", "hook-events", "--evidence-kind", "config_inventory", "--limit", "500", "--json")
	tools := map[any]bool{}
	for _, ev := range configured.Events {
		tools[ev["ai_tool"]] = true
		if ev["log_id"] != nil || ev["ai_session_id"] != nil || ev["status"] != "configured" {
			t.Errorf("a configured hook looks like a run: %v", ev)
		}
		if ev["timestamp"] != cortex.FormatTime(configChanged) || ev["last_seen"] == ev["timestamp"] {
			t.Errorf("a configured hook is dated %v (last seen %v), not by its file (%s)", ev["timestamp"], ev["last_seen"],
				cortex.FormatTime(configChanged))
		}
	}
	if !tools["claude"] || !tools["codex"] || !tools["gemini"] {
		t.Errorf("configured hooks by agent: %v", tools)
	}

	// Backfill on a store indexed with events adds nothing; a dry run says so too.
	var bf struct {
		DryRun  bool           `json:"dry_run"`
		Scanned int            `json:"scanned_rows"`
		Events  map[string]int `json:"events"`
	}
	e.json(&bf, "ai", "backfill", "--all", "--dry-run", "--json")
	if !bf.DryRun || bf.Scanned == 0 || bf.Events["skill_events"]+bf.Events["mcp_events"]+bf.Events["hook_events"] != 0 {
		t.Errorf("dry-run backfill of an extracted store: %+v", bf)
	}
	out, _, code := e.run("ai", "skills", "backfill")
	if code != 0 || !strings.Contains(out, "added 0 skill") {
		t.Errorf("skills backfill:\n%s", out)
	}
}
