package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

// carriers returns text the way transcripts carry it: plain, as a JSON
// string (Go's encoder writes & < > as \u escapes), inside JSON inside a
// JSON string (Codex tool arguments), and with every character of the
// secret written as a \u escape.
func carriers(f testcorpus.Secret) map[string][]byte {
	plain, _ := json.Marshal(map[string]string{"text": f.Text})
	nested, _ := json.Marshal(map[string]string{"text": f.Text})
	doubly, _ := json.Marshal(map[string]string{"arguments": string(nested)})
	var esc strings.Builder
	for _, c := range f.Value {
		fmt.Fprintf(&esc, `\u%04x`, c)
	}
	escaped := strings.Replace(string(plain), jsonInner(f.Value), esc.String(), 1)
	return map[string][]byte{"text": []byte(f.Text), "json": plain, "json-in-json": doubly, "u-escaped": []byte(escaped)}
}

// jsonInner is s as it appears inside a JSON string.
func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestSecretCorpus: every format of testdata/secrets.tsv is redacted in
// every carrier — text through String, JSON through JSON (the ingest
// path for raw records).
func TestSecretCorpus(t *testing.T) {
	corpus := testcorpus.Secrets(t)
	r := New()
	leaked := map[string][]string{}
	for _, f := range corpus {
		for carrier, in := range carriers(f) {
			var out []byte
			if carrier == "text" {
				s, _ := r.String(string(in))
				out = []byte(s)
			} else {
				out, _ = r.JSON(in)
				if !json.Valid(out) {
					t.Errorf("%s/%s: redacted JSON is invalid: %s", f.Name, carrier, out)
				}
				var v map[string]string
				_ = json.Unmarshal(out, &v)
				for _, s := range v {
					out = append(out, s...) // the decoded form must not leak either
				}
			}
			if testcorpus.Leak(string(out), f.Value) != "" {
				leaked[f.Name] = append(leaked[f.Name], carrier)
			}
		}
	}
	for name, cs := range leaked {
		t.Errorf("%s leaks in %v", name, cs)
	}
	t.Logf("%d formats, %d leak", len(corpus), len(leaked))
}
