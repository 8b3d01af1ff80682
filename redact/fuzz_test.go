package redact

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// fuzzSeeds are the inputs of every table test case.
func fuzzSeeds() []string {
	var seeds []string
	for _, c := range cases() {
		seeds = append(seeds, c.in)
	}
	return seeds
}

// FuzzBytesKeepsJSONValid builds a JSON object from fuzzed strings, both as
// keys and values and as JSON text embedded in a string, and checks that
// redaction leaves it valid JSON.
func FuzzBytesKeepsJSONValid(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add("content", s)
		f.Add(s, "password")
	}
	r := New()
	f.Fuzz(func(t *testing.T, key, value string) {
		inner, err := json.Marshal(map[string]string{key: value})
		if err != nil {
			t.Skip()
		}
		doc, err := json.Marshal(map[string]any{
			"type":    "user",
			key:       value,
			"content": []string{value, key + "=" + value, key + ": " + value},
			"nested":  string(inner),
			"raw":     json.RawMessage(inner),
		})
		if err != nil {
			t.Skip()
		}
		out, _ := r.Bytes(doc)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON after redaction\n in: %s\nout: %s", doc, out)
		}
		// The ingest path: \u escapes written as characters first.
		if out, _ := r.JSON(doc); !json.Valid(out) {
			t.Fatalf("invalid JSON after JSON redaction\n in: %s\nout: %s", doc, out)
		}
		if n := unescapeASCII(doc); !jsonEqual(n, doc) {
			t.Fatalf("unescaping changed the JSON value\n in: %s\nout: %s", doc, n)
		}
		if out := r.Opaque(doc); !json.Valid(out) {
			t.Fatalf("invalid JSON after Opaque\n in: %s\nout: %s", doc, out)
		}
		if _, err := json.Marshal(value); err == nil && json.Valid([]byte(value)) {
			if out, _ := r.Bytes([]byte(value)); !json.Valid(out) {
				t.Fatalf("invalid JSON after redaction\n in: %s\nout: %s", value, out)
			}
		}
	})
}

// FuzzRedactIsIdempotent checks that redacting twice equals redacting once
// and that the second pass finds nothing.
func FuzzRedactIsIdempotent(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	r := New()
	f.Fuzz(func(t *testing.T, s string) {
		once, _ := r.String(s)
		twice, n := r.String(once)
		if twice != once || n != 0 {
			t.Fatalf("not idempotent (%d)\n  in: %q\nonce: %q\ntwice: %q", n, s, once, twice)
		}
	})
}

// TestRandomFragmentsKeepJSONValid is a denser, deterministic version of the
// fuzz targets: it glues together fragments that trigger the rules (keys,
// separators, quotes, escapes, token prefixes, PEM markers), embeds the
// result in JSON at several levels of escaping and checks validity and
// idempotence.
func TestRandomFragmentsKeepJSONValid(t *testing.T) {
	fragments := []string{
		"password", "PASSWORD", "token", "api_key", "secret_access_key", "pwd",
		"=", ":", ":=", "=>", "==", " ", "\t", "\n", `"`, "'", `\`, `\n`, `\"`, `\\`, `\u0041`,
		",", ";", "}", "{", "]", "[", "(", ")", "&", "$", "/", "@", "://", "https", "u:p@h",
		"abc123", "hunter22", "12345678", Marker, "null", "[PAD]",
		"Bearer ", "Authorization: Basic ", "dXNlcjpwYXNzd29yZA==",
		"eyJ", "eyJhbGciOiJIUzI1NiJ9", ".", "SflKxwRJSMeKKF2QT4fw",
		"sk-", "sk-ant-", "Ab3Cd4Ef5Gh6Ij7Kl8Mn9", "ghp_", "AKIA", "IOSFODNN7EXAMPLE", "AIza", "npm_", "xoxb-", "glpat-",
		"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA",
	}
	r := New()
	rng := rand.New(rand.NewPCG(7, 9))
	for range 20000 {
		var sb strings.Builder
		for n := 1 + rng.IntN(12); n > 0; n-- {
			sb.WriteString(fragments[rng.IntN(len(fragments))])
		}
		s := sb.String()
		inner, _ := json.Marshal(map[string]string{s: s, "k": s})
		docs := [][]byte{inner}
		doc, _ := json.Marshal(map[string]any{"content": s, s: []string{s}, "nested": string(inner), "raw": json.RawMessage(inner)})
		docs = append(docs, doc)
		if json.Valid([]byte(s)) {
			docs = append(docs, []byte(s))
		}
		for _, d := range docs {
			out, _ := r.Bytes(d)
			if !json.Valid(out) {
				t.Fatalf("invalid JSON after redaction\n in: %s\nout: %s", d, out)
			}
			if again, n := r.Bytes(out); n != 0 || !bytes.Equal(again, out) {
				t.Fatalf("not idempotent\n in: %s\nonce: %s\ntwice: %s", d, out, again)
			}
		}
		once, _ := r.String(s)
		if twice, n := r.String(once); n != 0 || twice != once {
			t.Fatalf("not idempotent\n  in: %q\nonce: %q\ntwice: %q", s, once, twice)
		}
	}
}

// jsonEqual reports whether two JSON documents hold the same value.
func jsonEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	x, _ := json.Marshal(va)
	y, _ := json.Marshal(vb)
	return bytes.Equal(x, y)
}
