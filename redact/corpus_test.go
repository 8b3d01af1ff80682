package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// SecretFormat is one line of testdata/secrets.tsv: a credential format,
// text that carries it as it would appear in a transcript, and the secret
// itself.
type SecretFormat struct{ Name, Text, Secret string }

// LoadSecretCorpus reads the secret corpus (also used by the end-to-end
// test of every surface, through the copy in cli/testdata).
func loadSecretCorpus(t testing.TB, path string) []SecretFormat {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []SecretFormat
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 3 {
			t.Fatalf("bad corpus line %q", line)
		}
		out = append(out, SecretFormat{parts[0], strings.ReplaceAll(parts[1], `\n`, "\n"), parts[2]})
	}
	return out
}

// leaks reports whether any 12-byte piece of secret (or all of a shorter
// one) survives in s: a redaction that keeps most of a secret leaks it.
func leaks(s, secret string) bool {
	const piece = 12
	if len(secret) <= piece {
		return strings.Contains(s, secret)
	}
	for i := 0; i+piece <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+piece]) {
			return true
		}
	}
	return false
}

// carriers returns text the way transcripts carry it: plain, as a JSON
// string (Go's encoder writes & < > as \u escapes), inside JSON inside a
// JSON string (Codex tool arguments), and with every character of the
// secret written as a \u escape.
func carriers(f SecretFormat) map[string][]byte {
	plain, _ := json.Marshal(map[string]string{"text": f.Text})
	nested, _ := json.Marshal(map[string]string{"text": f.Text})
	doubly, _ := json.Marshal(map[string]string{"arguments": string(nested)})
	var esc strings.Builder
	for _, c := range f.Secret {
		fmt.Fprintf(&esc, `\u%04x`, c)
	}
	escaped := strings.Replace(string(plain), jsonInner(f.Secret), esc.String(), 1)
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
	corpus := loadSecretCorpus(t, "testdata/secrets.tsv")
	if len(corpus) < 50 {
		t.Fatalf("corpus has %d formats, want at least 50", len(corpus))
	}
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
			if leaks(string(out), f.Secret) {
				leaked[f.Name] = append(leaked[f.Name], carrier)
			}
		}
	}
	for name, cs := range leaked {
		t.Errorf("%s leaks in %v", name, cs)
	}
	t.Logf("%d formats, %d leak", len(corpus), len(leaked))
}
