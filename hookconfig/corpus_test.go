package hookconfig

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
)

// realConfig is one configuration file of the real corpus.
type realConfig struct {
	rel string // path under the corpus root
	src Source
}

// realConfigs finds the files under <corpus>/*/*/config/ and classifies them.
func realConfigs(t *testing.T) []realConfig {
	t.Helper()
	root := testcorpus.Real(t)
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*", "config"))
	if err != nil {
		t.Fatal(err)
	}
	var out []realConfig
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			in, _ := filepath.Rel(dir, path)
			var kind string
			var tool cortex.Tool
			switch slashed := filepath.ToSlash(in); {
			case strings.HasPrefix(slashed, ".claude/settings") && strings.HasSuffix(slashed, ".json"):
				kind, tool = KindClaudeSettings, cortex.ToolClaude
			case slashed == ".codex/hooks.json":
				kind, tool = KindCodexHooks, cortex.ToolCodex
			case slashed == ".codex/config.toml":
				kind, tool = KindCodexConfig, cortex.ToolCodex
			case slashed == ".gemini/settings.json":
				kind, tool = KindGeminiSettings, cortex.ToolGemini
			default:
				t.Logf("not a hook configuration file: %s", rel)
				return nil
			}
			out = append(out, realConfig{rel: rel, src: Source{
				Path: path, Kind: kind, Tool: tool, Scope: ScopeProject, Project: dir,
			}})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Skip("no config samples in the real corpus")
	}
	return out
}

// want is an expected row, computed from a plain decode of the file.
type want struct {
	event, name, command, source, hash, evidence string
	meta                                         map[string]string
}

// expectJSON computes the rows of a JSON settings/hooks file from a plain
// encoding/json decode (no code shared with the parser). Keys are
// "<event>/<group>.<hook>".
func expectJSON(t *testing.T, src Source, data []byte) map[string]want {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", src.Path, err)
	}
	hooks, ok := doc["hooks"].(map[string]any)
	if !ok && src.Kind == KindCodexHooks {
		hooks = doc
	}
	disabled := ""
	if src.Kind == KindClaudeSettings && doc["disableAllHooks"] == true {
		disabled = "disableAllHooks"
	}
	if src.Kind == KindGeminiSettings && hooks["enabled"] == false {
		disabled = "hooks.enabled"
	}
	out := map[string]want{}
	for event, v := range hooks {
		if src.Kind == KindGeminiSettings && (event == "enabled" || event == "disabled" || event == "notifications") {
			continue
		}
		groups, ok := v.([]any)
		if !ok {
			t.Fatalf("%s: event %s is not a list", src.Path, event)
		}
		for g, gv := range groups {
			group := gv.(map[string]any)
			name := event
			m, hasMatcher := group["matcher"].(string)
			if hasMatcher && m != "" {
				name = event + ":" + m
			}
			for h, hv := range group["hooks"].([]any) {
				hook := hv.(map[string]any)
				meta := map[string]string{
					"position":    fmt.Sprintf("%d.%d", g, h),
					"config_path": src.Path,
				}
				if hasMatcher {
					meta["matcher"] = m
				}
				if s, ok := hook["type"].(string); ok {
					meta["type"] = s
				}
				if s, ok := hook["name"].(string); ok {
					meta["name"] = s
				}
				for _, k := range []string{"timeoutSec", "timeout"} { // "timeout" wins
					if n, ok := hook[k].(float64); ok {
						meta["timeout"] = fmt.Sprint(n)
					}
				}
				if disabled != "" {
					meta["enabled"] = "false"
					meta["disabled_by"] = disabled
				}
				var command string
				switch c := hook["command"].(type) {
				case string:
					command = c
				case []any:
					var parts []string
					for _, p := range c {
						parts = append(parts, p.(string))
					}
					command = strings.Join(parts, " ")
					meta["command_argv"] = "true"
				}
				out[fmt.Sprintf("%s/%d.%d", event, g, h)] = want{
					event: event, name: name, command: command,
					source:   fmt.Sprintf("%s:%s:%s", src.Tool, src.Scope, filepath.Base(src.Path)),
					evidence: cortex.EvidenceConfig, meta: meta,
				}
			}
		}
	}
	return out
}

// expectTOML computes the [hooks.state] rows of a config.toml from a plain
// go-toml decode. Keys are the state keys.
func expectTOML(t *testing.T, src Source, data []byte) map[string]want {
	t.Helper()
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", src.Path, err)
	}
	common := map[string]string{"config_path": src.Path}
	if f, ok := doc["features"].(map[string]any); ok {
		if v, ok := f["codex_hooks"]; ok {
			common["codex_hooks_feature"] = fmt.Sprint(v)
		}
		if v, ok := f["hooks"]; ok {
			common["hooks_feature"] = fmt.Sprint(v)
		}
	}
	out := map[string]want{}
	hooks, _ := doc["hooks"].(map[string]any)
	state, _ := hooks["state"].(map[string]any)
	for key, v := range state {
		meta := map[string]string{}
		for k, v := range common {
			meta[k] = v
		}
		var hash string
		switch x := v.(type) {
		case string:
			hash = x
		case map[string]any:
			if s, ok := x["trusted_hash"].(string); ok {
				hash = s
			} else if s, ok := x["hash"].(string); ok {
				hash = s
			}
			if b, ok := x["enabled"].(bool); ok {
				meta["enabled"] = fmt.Sprint(b)
			}
		}
		// Codex keys: <file>:<event>:<group>:<hook>.
		if parts := strings.Split(key, ":"); len(parts) >= 4 {
			n := len(parts)
			meta["hook_config_path"] = strings.Join(parts[:n-3], ":")
			meta["hook_event_key"] = parts[n-3]
			meta["position"] = parts[n-2] + "." + parts[n-1]
		}
		out[key] = want{
			event: "hook_trust_state", name: key, hash: hash,
			source:   fmt.Sprintf("%s:%s:config.toml[hooks.state]", src.Tool, src.Scope),
			evidence: cortex.EvidenceTrust, meta: meta,
		}
	}
	return out
}

// checkRows compares parsed rows with the expectation.
func checkRows(t *testing.T, src Source, got []Hook, exp map[string]want) {
	t.Helper()
	if len(got) != len(exp) {
		t.Errorf("%s: %d hooks, want %d", src.Path, len(got), len(exp))
	}
	seen := map[string]bool{}
	for i, h := range got {
		key := h.HookEvent.HookEvent + "/" + h.Meta["position"]
		if src.Kind == KindCodexConfig {
			key = h.HookName
		}
		if seen[key] {
			t.Errorf("%s: row %s listed twice", src.Path, key)
		}
		seen[key] = true
		w, ok := exp[key]
		if !ok {
			t.Errorf("%s: unexpected row %s", src.Path, key)
			continue
		}
		if h.Index != i {
			t.Errorf("%s: row %s has Index %d, want %d", src.Path, key, h.Index, i)
		}
		if h.HookEvent.HookEvent != w.event || h.HookName != w.name || h.Command != w.command ||
			h.HookSource != w.source || h.TrustedHash != w.hash || h.EvidenceKind != w.evidence {
			t.Errorf("%s: row %s = {%q %q %q %q %q %q}, want {%q %q %q %q %q %q}", src.Path, key,
				h.HookEvent.HookEvent, h.HookName, h.Command, h.HookSource, h.TrustedHash, h.EvidenceKind,
				w.event, w.name, w.command, w.source, w.hash, w.evidence)
		}
		if h.Status != cortex.HookConfigured || h.ExitCode != nil || h.DurationMS != nil ||
			h.StdoutPreview != "" || h.StderrPreview != "" || h.PersistedOutputPath != "" {
			t.Errorf("%s: row %s carries runtime fields: %+v", src.Path, key, h.HookEvent)
		}
		if h.Tool != src.Tool || h.Source != src {
			t.Errorf("%s: row %s has tool %q source %+v", src.Path, key, h.Tool, h.Source)
		}
		if fmt.Sprint(h.Meta) != fmt.Sprint(w.meta) {
			t.Errorf("%s: row %s meta\n got %v\nwant %v", src.Path, key, h.Meta, w.meta)
		}
	}
}

// TestRealCorpus parses every real config sample and checks the exact rows.
func TestRealCorpus(t *testing.T) {
	for _, rc := range realConfigs(t) {
		t.Run(rc.rel, func(t *testing.T) {
			data, err := os.ReadFile(rc.src.Path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(rc.src, data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var exp map[string]want
			if rc.src.Kind == KindCodexConfig {
				exp = expectTOML(t, rc.src, data)
			} else {
				exp = expectJSON(t, rc.src, data)
				checkFileOrder(t, rc.src, data, got)
			}
			checkRows(t, rc.src, got, exp)
			var events []string
			for _, h := range got {
				if !slices.Contains(events, h.HookEvent.HookEvent) {
					events = append(events, h.HookEvent.HookEvent)
				}
			}
			t.Logf("%s: %d hooks %v", rc.rel, len(got), events)
		})
	}
}

// checkFileOrder asserts that rows follow the file: events in the order their
// keys first appear, and positions ascending within an event.
func checkFileOrder(t *testing.T, src Source, data []byte, got []Hook) {
	t.Helper()
	text := string(data)
	lastAt, lastPos := -1, ""
	for _, h := range got {
		at := strings.Index(text, fmt.Sprintf("%q:", h.HookEvent.HookEvent))
		if at < 0 {
			t.Fatalf("%s: event %s not in the file", src.Path, h.HookEvent.HookEvent)
		}
		switch {
		case at < lastAt:
			t.Errorf("%s: event %s out of file order", src.Path, h.HookEvent.HookEvent)
		case at == lastAt && h.Meta["position"] <= lastPos:
			t.Errorf("%s: %s position %s after %s", src.Path, h.HookEvent.HookEvent, h.Meta["position"], lastPos)
		}
		lastAt, lastPos = at, h.Meta["position"]
	}
}

// TestCollectRealCorpus runs Collect over the real samples: every file is
// reported without error.
func TestCollectRealCorpus(t *testing.T) {
	rcs := realConfigs(t)
	var srcs []Source
	for _, rc := range rcs {
		srcs = append(srcs, rc.src)
	}
	hooks, results := Collect(t.Context(), srcs)
	if len(results) != len(srcs) {
		t.Fatalf("%d results for %d files", len(results), len(srcs))
	}
	total := 0
	for _, r := range results {
		if r.Error != "" {
			t.Errorf("%s: %s", r.Path, r.Error)
		}
		total += r.Hooks
	}
	if total != len(hooks) {
		t.Errorf("results count %d hooks, got %d", total, len(hooks))
	}
	if !slices.IsSortedFunc(results, func(a, b FileResult) int { return strings.Compare(a.Path, b.Path) }) {
		t.Error("results not sorted by path")
	}
}
