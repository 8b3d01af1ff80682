package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// syntheticTranscript builds about size bytes of JSONL shaped like Claude
// Code and Codex transcripts: prose, code, file paths, tool calls and
// results, usage blocks and token_count events, UUIDs, git SHAs and the odd
// base64 screenshot. It contains words like "password" and "token" the way
// real transcripts do, but no secrets.
func syntheticTranscript(size int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", rng.Uint32(), rng.Uint32()&0xffff,
			rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint64()&0xffffffffffff)
	}
	sha := func() string { return fmt.Sprintf("%016x%016x%08x", rng.Uint64(), rng.Uint64(), rng.Uint32()) }
	line := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return append(b, '\n')
	}
	prose := []string{
		"I'll update the login handler so that the password field is required and validated before we hash it.",
		"The tokenizer splits the input into tokens; the token count is reported in the usage block.",
		"Let me look at how the session secret is loaded from the environment in config.go.",
		"Running the tests again to confirm the fix. All 42 tests pass now.",
		"The API key is read from OPENAI_API_KEY at startup; nothing is hard-coded.",
		"This function returns an error when the bearer of the request is not authenticated.",
		"We should switch to sk-learn style pipelines? No, scikit-learn is not a dependency here.",
	}
	code := []string{
		"func (s *Server) Login(w http.ResponseWriter, r *http.Request) {\n\tpassword := r.FormValue(\"password\")\n\tif password == \"\" {\n\t\thttp.Error(w, \"password is required\", 400)\n\t\treturn\n\t}\n\thash, err := bcrypt.GenerateFromPassword([]byte(password), 12)\n}\n",
		"import os\n\napi_key = os.environ[\"OPENAI_API_KEY\"]\ntoken = get_token(user)\nclient = OpenAI(api_key=api_key)\nresp = client.chat.completions.create(model=\"gpt-4o\", max_tokens=1024)\n",
		"const config = {\n  port: 8080,\n  secret: process.env.SESSION_SECRET,\n  tokenTtl: 3600,\n};\nexport default config;\n",
		"diff --git a/internal/auth/token.go b/internal/auth/token.go\nindex 3f2a1b0..8c9d7e2 100644\n--- a/internal/auth/token.go\n+++ b/internal/auth/token.go\n@@ -12,7 +12,7 @@ func Parse(raw string) (*Token, error) {\n-\treturn nil, errInvalid\n+\treturn nil, fmt.Errorf(\"parse token: %w\", errInvalid)\n",
	}
	paths := []string{"/home/dev/projects/cortex/internal/ingest/reader.go", "src/components/LoginForm.tsx", "~/.config/cortex/config.toml", "https://github.com/cortexhq/cortex/pull/123"}
	img := make([]byte, 6000)
	for i := range img {
		img[i] = byte(rng.Uint32())
	}
	screenshot := "data:image/png;base64," + base64.StdEncoding.EncodeToString(img)

	var buf bytes.Buffer
	session := uuid()
	for n := 0; buf.Len() < size; n++ {
		ts := fmt.Sprintf("2025-11-%02dT%02d:%02d:%02d.%03dZ", 1+n%28, n%24, n%60, (n*7)%60, n%1000)
		switch n % 7 {
		case 0:
			buf.Write(line(map[string]any{"type": "user", "uuid": uuid(), "parentUuid": uuid(), "sessionId": session, "timestamp": ts,
				"cwd": "/home/dev/projects/cortex", "gitBranch": "main",
				"message": map[string]any{"role": "user", "content": prose[n%len(prose)] + " See " + paths[n%len(paths)]}}))
		case 1:
			buf.Write(line(map[string]any{"type": "assistant", "uuid": uuid(), "sessionId": session, "timestamp": ts,
				"message": map[string]any{"id": "msg_01" + sha()[:22], "role": "assistant", "model": "claude-sonnet-4-5",
					"content": []any{map[string]any{"type": "text", "text": prose[(n+3)%len(prose)] + "\n\n```go\n" + code[n%len(code)] + "```"}},
					"usage":   map[string]any{"input_tokens": 1200 + n, "cache_creation_input_tokens": 512, "cache_read_input_tokens": 20480, "output_tokens": 350}}}))
		case 2:
			buf.Write(line(map[string]any{"type": "assistant", "uuid": uuid(), "timestamp": ts,
				"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_01" + sha()[:20], "name": "Bash",
					"input": map[string]any{"command": "git log --oneline -5 && grep -rn \"password\" internal/auth", "description": "Find password handling"}}}}}))
		case 3:
			out := fmt.Sprintf("%s fix: require password on login\n%s feat: add token refresh\n%s chore: bump deps\ninternal/auth/login.go:42:\tpassword := r.FormValue(\"password\")\n", sha()[:7], sha()[:7], sha()[:7])
			buf.Write(line(map[string]any{"type": "user", "uuid": uuid(), "timestamp": ts, "toolUseResult": map[string]any{"stdout": out, "stderr": "", "interrupted": false},
				"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_01" + sha()[:20], "content": out + code[(n+1)%len(code)]}}}}))
		case 4:
			buf.Write(line(map[string]any{"timestamp": ts, "type": "event_msg", "payload": map[string]any{"type": "token_count", "info": map[string]any{
				"total_token_usage":    map[string]any{"input_tokens": 51234 + n, "cached_input_tokens": 40960, "output_tokens": 2048, "reasoning_output_tokens": 512, "total_tokens": 53282},
				"model_context_window": 272000}, "rate_limits": map[string]any{"primary": map[string]any{"used_percent": 12.5, "window_minutes": 300}}}}))
		case 5:
			buf.Write(line(map[string]any{"timestamp": ts, "type": "response_item", "payload": map[string]any{"type": "function_call", "name": "shell", "call_id": "call_" + sha()[:24],
				"arguments": `{"command":["bash","-lc","sed -n '1,80p' ` + paths[n%len(paths)] + `"],"workdir":"/home/dev/projects/cortex","timeout_ms":120000}`}}))
		case 6:
			content := []any{map[string]any{"type": "text", "text": "Here is the screenshot of the login page."}}
			if n%70 == 6 {
				content = append(content, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": screenshot}})
			}
			buf.Write(line(map[string]any{"type": "user", "uuid": uuid(), "timestamp": ts, "message": map[string]any{"role": "user", "content": content}}))
		}
	}
	return buf.Bytes()
}

// syntheticWithSecrets is syntheticTranscript with one secret-bearing line
// after roughly every 50 lines.
func syntheticWithSecrets(size int) []byte {
	lines := bytes.SplitAfter(syntheticTranscript(size), []byte("\n"))
	var buf bytes.Buffer
	for i, l := range lines {
		buf.Write(l)
		if i%50 == 0 {
			buf.WriteString(positiveJSONLines[i/50%len(positiveJSONLines)] + "\n")
		}
	}
	return buf.Bytes()
}

func benchmarkBytes(b *testing.B, data []byte) {
	r := New()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r.Bytes(data)
	}
}

func BenchmarkBytesNoSecrets(b *testing.B) {
	data := syntheticTranscript(1 << 20)
	if _, n := New().Bytes(data); n != 0 {
		b.Fatalf("synthetic corpus has %d matches, want 0", n)
	}
	benchmarkBytes(b, data)
}

func BenchmarkBytesWithSecrets(b *testing.B) {
	benchmarkBytes(b, syntheticWithSecrets(1<<20))
}

// benchmarkLines redacts data line by line with Bytes.
func benchmarkLines(b *testing.B, data []byte) {
	benchmarkEachLine(b, data, (*Redactor).Bytes)
}

// benchmarkEachLine redacts data line by line with redact (Bytes, or JSON
// the way ingest calls it on every record).
func benchmarkEachLine(b *testing.B, data []byte, redact func(*Redactor, []byte) ([]byte, int)) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	r := New()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			redact(r, l)
		}
	}
}

func BenchmarkBytesPerLineNoSecrets(b *testing.B) {
	benchmarkLines(b, syntheticTranscript(1<<20))
}

func BenchmarkBytesPerLineWithSecrets(b *testing.B) {
	benchmarkLines(b, syntheticWithSecrets(1<<20))
}

// realCorpus reads up to limit bytes of transcripts from the shared corpus
// (../shared/corpus/real relative to the module root).
func realCorpus(limit int) ([]byte, error) {
	root := filepath.Join("..", "..", "shared", "corpus", "real")
	var buf bytes.Buffer
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || !(strings.HasSuffix(name, ".jsonl") || name == "raw_transcript") || buf.Len() >= limit {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		buf.Write(data[:min(len(data), limit-buf.Len())])
		buf.WriteByte('\n')
		return nil
	})
	return buf.Bytes(), err
}

// BenchmarkRealCorpus redacts up to 20 MB of real transcripts, as one
// buffer, line by line, and as JSON line by line.
func BenchmarkRealCorpus(b *testing.B) {
	data, err := realCorpus(20 << 20)
	if err != nil || len(data) == 0 {
		b.Skipf("real corpus not available: %v", err)
	}
	b.Run("buffer", func(b *testing.B) { benchmarkBytes(b, data) })
	b.Run("lines", func(b *testing.B) { benchmarkLines(b, data) })
	b.Run("json-lines", func(b *testing.B) { benchmarkEachLine(b, data, (*Redactor).JSON) })
}
