package testcorpus

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Secret is one format of the secret corpus, redact/testdata/secrets.tsv:
// its name, text carrying it as a transcript would, and the secret itself.
// Every value is fake.
type Secret struct{ Name, Text, Value string }

// Secrets reads the secret corpus (at least 50 formats).
func Secrets(tb testing.TB) []Secret {
	tb.Helper()
	f, err := os.Open(filepath.Join(moduleRoot(), "redact", "testdata", "secrets.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []Secret
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Split(line, "\t")
		if len(p) != 3 || !strings.Contains(strings.ReplaceAll(p[1], `\n`, "\n"), p[2]) {
			tb.Fatalf("bad secret corpus line %q", line)
		}
		out = append(out, Secret{p[0], strings.ReplaceAll(p[1], `\n`, "\n"), p[2]})
	}
	if len(out) < 50 {
		tb.Fatalf("the secret corpus has %d formats, want at least 50", len(out))
	}
	return out
}

// leakPiece is the length of a secret's pieces Leak looks for.
const leakPiece = 12

// Leak returns a 12-byte piece of secret (all of a shorter one) found in
// s, or "": a redaction that keeps most of a secret leaks it.
func Leak(s, secret string) string {
	if len(secret) <= leakPiece {
		if strings.Contains(s, secret) {
			return secret
		}
		return ""
	}
	for i := 0; i+leakPiece <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+leakPiece]) {
			return secret[i : i+leakPiece]
		}
	}
	return ""
}
