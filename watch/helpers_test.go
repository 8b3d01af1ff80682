package watch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
)

// corpusFile is a real Claude Code transcript the fixtures are cut from.
const corpusFile = "claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"

// fixture holds real transcript lines read from the corpus (never written).
type fixture struct {
	head [][]byte // the first lines of the transcript, each with "\n"
	user []byte   // a user-message line used as the template of probes
}

func loadFixture(t testing.TB) fixture {
	t.Helper()
	f, err := os.Open(filepath.Join(testcorpus.Real(t), corpusFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fx fixture
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() && len(fx.head) < 8 {
		line := append(bytes.Clone(sc.Bytes()), '\n')
		fx.head = append(fx.head, line)
		var rec struct {
			Type    string `json:"type"`
			Message struct {
				Content any `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "user" && fx.user == nil {
			if _, ok := rec.Message.Content.(string); ok {
				fx.user = bytes.TrimSpace(line)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if fx.user == nil {
		t.Fatalf("no user message line in %s", corpusFile)
	}
	return fx
}

// headBytes is the fixture's first lines as one file body.
func (fx fixture) headBytes() []byte { return bytes.Join(fx.head, nil) }

// probe returns a copy of the real user line with a fresh uuid and a text
// carrying token (a searchable word), terminated by "\n".
func (fx fixture) probe(t testing.TB, token string) []byte {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal(fx.user, &rec); err != nil {
		t.Fatal(err)
	}
	rec["uuid"] = newID()
	rec["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	rec["message"] = map[string]any{"role": "user", "content": "please look at " + token + " before lunch"}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// token returns a fresh word that matches nothing else.
func token(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + "zq" + hex.EncodeToString(b)
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t testing.TB, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func openStore(t testing.TB) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cortex.db")
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// hits counts the rows whose text contains word.
func hits(t testing.TB, db *sqlite.DB, word string) int {
	t.Helper()
	res, err := db.Search(context.Background(), cortex.SearchParams{Query: word, Limit: 50})
	if err != nil {
		t.Fatalf("search %q: %v", word, err)
	}
	return len(res.Hits)
}

func rows(t testing.TB, db *sqlite.DB) int64 {
	t.Helper()
	st, err := db.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Rows
}

// waitHits polls until word is stored and returns how long it took.
func waitHits(t testing.TB, db *sqlite.DB, word string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for hits(t, db, word) == 0 {
		if time.Since(start) > within {
			t.Fatalf("%q not stored within %s", word, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// logBuffer collects log output safely across goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// running is a watcher started by a test.
type running struct {
	t       testing.TB
	cancel  context.CancelFunc
	done    chan error
	reports chan Report
	logs    *logBuffer
}

// start runs the watcher on roots and waits for its initial full pass.
func start(t testing.TB, store ingest.Store, roots []string, tweak func(*Options)) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, cancel: cancel, done: make(chan error, 1), reports: make(chan Report, 100), logs: &logBuffer{}}
	opts := Options{
		Roots:  roots,
		Index:  ingest.Options{Hostname: "test-host", Workers: 2},
		Rescan: time.Minute, // events, not rescans, must do the work
		Logger: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	opts.OnIngest = func(rep Report) {
		select {
		case r.reports <- rep:
		default:
		}
	}
	if tweak != nil {
		tweak(&opts)
	}
	go func() { r.done <- Run(ctx, store, opts) }()
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("watcher log:\n%s", r.logs.String())
		}
	})
	first := r.next(10 * time.Second)
	if !first.Full {
		t.Fatalf("first pass is not the full scan: %+v", first)
	}
	return r
}

// next waits for the next pass report.
func (r *running) next(within time.Duration) Report {
	r.t.Helper()
	select {
	case rep := <-r.reports:
		return rep
	case err := <-r.done:
		r.t.Fatalf("watcher exited: %v", err)
	case <-time.After(within):
		r.t.Fatalf("no ingest pass within %s", within)
	}
	return Report{}
}

// waitPass waits for a pass that read path.
func (r *running) waitPass(path string, within time.Duration) Report {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		rep := r.next(time.Until(deadline))
		for _, p := range rep.Paths {
			if p == path || rep.Full {
				return rep
			}
		}
	}
}

// stop cancels the watcher and returns how long Run took to return.
func (r *running) stop() (time.Duration, error) {
	r.cancel()
	start := time.Now()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return time.Since(start), err
	case <-time.After(10 * time.Second):
		return time.Since(start), fmt.Errorf("Run did not return")
	}
}

// alive fails the test if the watcher has exited.
func (r *running) alive() {
	r.t.Helper()
	select {
	case err := <-r.done:
		r.t.Fatalf("watcher exited: %v", err)
	default:
	}
}
