package cortex

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// metadataJSONReference is MetadataJSON as first written: every key through
// strconv.Quote, every value through encoding/json.
func metadataJSONReference(e *Entry) string {
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	field := func(k string, raw string) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(raw)
	}
	keys := make([]string, 0, len(e.Meta)+2)
	for k := range e.Meta {
		keys = append(keys, k)
	}
	if e.ToolVersion != "" && e.Meta["version"] == "" {
		keys = append(keys, "version")
	}
	if e.Model != "" && e.Meta["model"] == "" {
		keys = append(keys, "model")
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := e.Meta[k]
		if !ok {
			switch k {
			case "version":
				v = e.ToolVersion
			case "model":
				v = e.Model
			}
		}
		out, err := json.Marshal(v)
		if err != nil {
			out = []byte(`""`)
		}
		field(k, string(out))
	}
	if e.Sidechain {
		field("sidechain", "true")
	}
	if e.TimestampEstimated {
		field("timestamp_estimated", "true")
	}
	if e.TextTruncated {
		field("text_truncated", "true")
	}
	b.WriteByte('}')
	return b.String()
}

// TestMetadataJSONPlainValues: values written as is (plain ASCII) and
// values that need escapes give what the reference gives, and valid JSON.
func TestMetadataJSONPlainValues(t *testing.T) {
	for _, e := range []Entry{
		{},
		{Model: "claude-opus-4-5", ToolVersion: "2.0.14", Meta: map[string]string{"cwd": "/Users/dev/project", "git_branch": "main"}},
		{Meta: map[string]string{"cmd": `echo "a<b>&c" \ done`, "tab": "a\tb\n", "uni": "héllo \u2028 ✓", "bad": "\xff"}},
		{Meta: map[string]string{"k\"ey": "v", "ké": "v", "a<b": "&"}, Sidechain: true, TimestampEstimated: true, TextTruncated: true},
	} {
		got, want := e.MetadataJSON(), metadataJSONReference(&e)
		if got != want {
			t.Errorf("MetadataJSON = %s, want %s", got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("MetadataJSON = %s: not JSON", got)
		}
	}
}

func FuzzMetadataJSON(f *testing.F) {
	f.Add("cwd", "/Users/dev/project", "claude-opus-4-5")
	f.Add("k\"", "a<b>&c\n\xff\u2028", "\x00")
	f.Fuzz(func(t *testing.T, k, v, model string) {
		e := Entry{Model: model, Meta: map[string]string{k: v, "x" + k: model}}
		if got, want := e.MetadataJSON(), metadataJSONReference(&e); got != want {
			t.Fatalf("MetadataJSON = %s, want %s", got, want)
		}
	})
}

func BenchmarkMetadataJSON(b *testing.B) {
	e := Entry{Model: "claude-opus-4-5", ToolVersion: "2.0.14", Meta: map[string]string{
		"cwd": "/Users/dev/projects/cortex", "git_branch": "main", "uuid": "0d3a8e6f-290f-4105-a327-a2496e5c1d2e",
		"parent_uuid": "9c1f2b7e-1a2b-4c3d-8e9f-0a1b2c3d4e5f", "request_id": "req_011CUz2sH5c7", "user_type": "external"}}
	b.Run("now", func(b *testing.B) {
		for b.Loop() {
			e.MetadataJSON()
		}
	})
	b.Run("reference", func(b *testing.B) {
		for b.Loop() {
			metadataJSONReference(&e)
		}
	})
}
