package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

// startServe starts `cortex serve` on a free loopback port and returns its
// base URL; the process is stopped with SIGINT when the test ends (and must
// exit 0).
func startServe(t *testing.T, e *env, args ...string) string {
	t.Helper()
	_, m := startDaemon(t, e, regexp.MustCompile(`http://(127\.0\.0\.1:\d+)`), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	return "http://" + m[0]
}

func getJSON(t *testing.T, url, token string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v\n%s", url, err, b)
		}
	}
	return res.StatusCode
}

// TestServeEndToEnd runs `cortex serve` on the default roots: REST with
// tokens, a transcript line appended while it runs found through REST
// within 2 s, the official TypeScript MCP client over /mcp, and a clean
// SIGINT.
func TestServeEndToEnd(t *testing.T) {
	corpus := realCorpus(t)
	e := newEnv(t)
	e.vars = append(e.vars, "CORTEX_READ_TOKEN=read-token-for-tests", "CORTEX_ADMIN_TOKEN=admin-token-for-tests")
	// A live Claude session under the default root, and the labelled
	// sessions under a second configured root.
	src, err := os.ReadFile(filepath.Join(corpus, "claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	session := filepath.Join(e.home, "projects", "-experiments-ideas", "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")
	copyBytes(t, session, []byte(strings.Join(lines[:8], "")))
	e.vars = append(e.vars, "CORTEX_INDEX_PATHS="+filepath.Join(e.home, "projects")+string(os.PathListSeparator)+labelledDir(t))

	base := startServe(t, e)
	var health map[string]string
	if getJSON(t, base+"/health", "", &health) != 200 || health["status"] != "ok" {
		t.Fatalf("health: %v", health)
	}
	if code := getJSON(t, base+"/api/status", "", nil); code != 401 {
		t.Fatalf("no token: %d", code)
	}
	if code := getJSON(t, base+"/api/ai/llm-invocations", "read-token-for-tests", nil); code != 403 {
		t.Fatalf("read token on an admin route: %d", code)
	}
	// The watcher's first pass indexes both roots.
	var inv struct {
		Evidence []struct {
			Incident struct {
				SkillName string `json:"skill_name"`
			} `json:"incident"`
		} `json:"evidence_summary"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if getJSON(t, base+"/api/ai/skill-investigate?skill=lavra:lavra-plan", "read-token-for-tests", &inv) == 200 && len(inv.Evidence) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("labelled sessions never indexed: %+v", inv)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Append a user line with a unique word; it must be searchable
	// through REST within 2 s.
	word := fmt.Sprintf("zebrafish%d", time.Now().UnixNano()%1e6)
	line := fmt.Sprintf(`{"type":"user","uuid":"e2e-%s","sessionId":"03eb5929-52b3-4b13-ada3-b93ae35806b8","timestamp":"%s","message":{"role":"user","content":"please check the %s config"}}`+"\n",
		word, time.Now().UTC().Format(time.RFC3339Nano), word)
	f, err := os.OpenFile(session, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	appended := time.Now()
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for {
		var res struct {
			Hits []map[string]any `json:"hits"`
		}
		getJSON(t, base+"/api/search?query="+word, "read-token-for-tests", &res)
		if len(res.Hits) == 1 {
			took := time.Since(appended)
			t.Logf("appended line searchable through REST after %v", took.Round(time.Millisecond))
			if took > 2*time.Second {
				t.Errorf("searchable after %v, want < 2s", took)
			}
			break
		}
		if time.Since(appended) > 10*time.Second {
			t.Fatal("appended line never searchable")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The official TypeScript MCP client over the server's /mcp.
	runTypeScriptClient(t, e.vars, "http", base+"/mcp", "read-token-for-tests")
}

func labelledDir(t *testing.T) string { return testcorpus.Labelled(t) }
