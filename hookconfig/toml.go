package hookconfig

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/pelletier/go-toml/v2"

	"github.com/cortexhq/cortex"
)

// trustKey is Codex's [hooks.state] key form:
// "<hooks file>:<snake_case event>:<group index>:<hook index>".
var trustKey = regexp.MustCompile(`^(.+):([a-z][a-z0-9_]*):([0-9]+):([0-9]+)$`)

// featureMeta maps [features] flags to the Meta key they are copied to.
var featureMeta = []struct{ flag, meta string }{
	{"codex_hooks", "codex_hooks_feature"},
	{"hooks", "hooks_feature"},
}

// tomlType names a decoded TOML value's type for messages.
func tomlType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a table"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// scalar renders a TOML scalar for Meta.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return cortex.CutUTF8(x, maxTypeBytes)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return tomlType(v)
}

func (p *parser) parseTOML(data []byte) error {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return cortex.WrapError(cortex.CodeInvalid, err, "%s: invalid TOML at line %d, column %d: %s",
				p.src.Path, row, col, de.Error())
		}
		return cortex.WrapError(cortex.CodeInvalid, err, "%s: invalid TOML: %v", p.src.Path, err)
	}
	common := map[string]string{}
	if features, ok := doc["features"].(map[string]any); ok {
		for _, f := range featureMeta {
			if v, ok := features[f.flag]; ok {
				common[f.meta] = scalar(v)
			}
		}
	}
	hooksVal, ok := doc["hooks"]
	if !ok {
		return nil
	}
	hooks, ok := hooksVal.(map[string]any)
	if !ok {
		return p.fatal("hooks: expected a table, got %s", tomlType(hooksVal))
	}
	stateVal, ok := hooks["state"]
	if !ok {
		return nil
	}
	state, ok := stateVal.(map[string]any)
	if !ok {
		return p.fatal("hooks.state: expected a table, got %s", tomlType(stateVal))
	}
	keys := make([]string, 0, len(state))
	for k := range state {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		path := "hooks.state." + keyPath(key)
		if key == "" {
			p.problem("%s: empty key; skipped", path)
			continue
		}
		if why := checkText(key, maxKeyBytes, false); why != "" {
			p.problem("%s: key %s; skipped", path, why)
			continue
		}
		meta := map[string]string{}
		for k, v := range common {
			meta[k] = v
		}
		var hash string
		switch v := state[key].(type) {
		case string:
			hash = v
		case map[string]any:
			field := "trusted_hash"
			hv, ok := v[field]
			if !ok {
				field = "hash"
				hv, ok = v[field]
			}
			if ok {
				s, isStr := hv.(string)
				if !isStr {
					p.problem("%s.%s: expected a string, got %s; skipped", path, field, tomlType(hv))
					continue
				}
				hash = s
			}
			if en, ok := v["enabled"]; ok {
				if b, isBool := en.(bool); isBool {
					meta["enabled"] = strconv.FormatBool(b)
				} else {
					p.problem("%s.enabled: expected a boolean, got %s; left out", path, tomlType(en))
				}
			}
		default:
			p.problem("%s: expected a hash string or a table, got %s; skipped", path, tomlType(v))
			continue
		}
		if why := checkText(hash, maxHashBytes, false); why != "" {
			p.problem("%s: trusted hash %s; skipped", path, why)
			continue
		}
		if m := trustKey.FindStringSubmatch(key); m != nil {
			meta["hook_config_path"] = m[1]
			meta["hook_event_key"] = m[2]
			meta["position"] = m[3] + "." + m[4]
		}
		p.add(cortex.HookEvent{
			HookEvent:    EventTrustState,
			HookName:     key,
			HookSource:   p.base + "[hooks.state]",
			TrustedHash:  hash,
			Status:       cortex.HookConfigured,
			EvidenceKind: cortex.EvidenceTrust,
			Meta:         meta,
		})
	}
	return nil
}
