package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/watch"
)

// Defaults of Watch.
const (
	DefaultWatchAppends = 20
	DefaultWatchIdle    = 10 * time.Second
	DefaultWatchTimeout = 30 * time.Second
	// watchPoll is how often Watch asks whether an appended record is
	// searchable yet.
	watchPoll = 5 * time.Millisecond
	// watchGap is the pause after a record became searchable before the
	// next is appended (an agent writes a record every few seconds at most).
	watchGap = 100 * time.Millisecond
)

// WatchOptions configures Watch.
type WatchOptions struct {
	// Roots are folders the watcher also watches (its first full pass over
	// them is the start cost); the appended session lives in a temporary
	// folder of its own.
	Roots []string
	// Appends is how many records are appended, one at a time (default
	// DefaultWatchAppends).
	Appends int
	// Idle is how long the watcher is left with nothing to do while its CPU
	// time is measured (default DefaultWatchIdle).
	Idle time.Duration
	// Timeout bounds the wait for one record to become searchable (default
	// DefaultWatchTimeout).
	Timeout time.Duration
	// Index is the template of the watcher's ingest passes.
	Index ingest.Options
}

// WatchReport is what Watch measured.
type WatchReport struct {
	StoreRows int64 `json:"store_rows"`
	// StartSeconds is the watcher's first full pass over the roots (files
	// unchanged since the last index are only stat'ed); StartFiles the
	// files it saw and StartRecordBytes the record bytes it read.
	StartSeconds     float64 `json:"start_seconds"`
	StartFiles       int     `json:"start_files"`
	StartRecordBytes int64   `json:"start_record_bytes"`
	// Append* is the time from a record's write to the transcript until a
	// search finds it, over Appends records.
	Appends       int     `json:"appends"`
	AppendP50MS   float64 `json:"append_to_searchable_p50_ms"`
	AppendP95MS   float64 `json:"append_to_searchable_p95_ms"`
	AppendMaxMS   float64 `json:"append_to_searchable_max_ms"`
	IdleSeconds   float64 `json:"idle_seconds"`
	IdleCPUPct    float64 `json:"idle_cpu_percent"`
	IdlePasses    int     `json:"idle_passes"`
	IdleRowsAdded int64   `json:"idle_rows_inserted"`
	// Purged is the rows of the appended session deleted afterwards.
	Purged int64 `json:"purged_rows"`
}

// Watch measures the watcher on db: the cost of its start, the time from
// appending a record to a transcript until search finds it, and its CPU
// use while nothing changes. It writes one short Claude session into the
// store (in a temporary folder) and purges it again at the end.
func Watch(ctx context.Context, db *sqlite.DB, o WatchOptions) (WatchReport, error) {
	if o.Appends <= 0 {
		o.Appends = DefaultWatchAppends
	}
	if o.Idle <= 0 {
		o.Idle = DefaultWatchIdle
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultWatchTimeout
	}
	var rep WatchReport
	st, err := db.Status(ctx)
	if err != nil {
		return rep, err
	}
	rep.StoreRows = st.Rows

	dir, err := os.MkdirTemp("", "cortex-bench-watch-")
	if err != nil {
		return rep, fmt.Errorf("bench watch: %w", err)
	}
	defer os.RemoveAll(dir)
	sess := newBenchSession(dir)
	if err := sess.append(sess.token(-1)); err != nil {
		return rep, err
	}

	wctx, stop := context.WithCancel(ctx)
	passes := make(chan watch.Report, 64)
	done := make(chan error, 1)
	stopWatch := sync.OnceValue(func() error { stop(); return <-done })
	defer stopWatch()
	go func() {
		done <- watch.Run(wctx, db, watch.Options{
			Roots: append(slices.Clone(o.Roots), dir),
			Index: o.Index,
			OnIngest: func(r watch.Report) {
				select {
				case passes <- r:
				default: // the report keeps counting; a full channel drops detail only
				}
			},
		})
	}()

	// The first pass is the full scan of the roots.
	select {
	case r := <-passes:
		if r.Err != nil {
			return rep, fmt.Errorf("bench watch: first pass: %w", r.Err)
		}
		rep.StartSeconds = r.Took.Seconds()
		rep.StartFiles = r.Summary.FilesSeen
		rep.StartRecordBytes = r.Summary.BytesRead
	case err := <-done:
		return rep, fmt.Errorf("bench watch: watcher stopped: %w", err)
	case <-time.After(10 * time.Minute):
		return rep, fmt.Errorf("bench watch: the first pass took more than 10 minutes")
	}

	lat := make([]float64, 0, o.Appends)
	for i := range o.Appends {
		tok := sess.token(i)
		began := time.Now()
		if err := sess.append(tok); err != nil {
			return rep, err
		}
		for {
			res, err := db.Search(ctx, cortex.SearchParams{Query: tok, Limit: 1})
			if err != nil {
				return rep, fmt.Errorf("bench watch: search: %w", err)
			}
			if len(res.Hits) > 0 {
				break
			}
			if time.Since(began) > o.Timeout {
				return rep, fmt.Errorf("bench watch: record %d not searchable after %s", i, o.Timeout)
			}
			time.Sleep(watchPoll)
		}
		lat = append(lat, float64(time.Since(began).Microseconds())/1000)
		time.Sleep(watchGap)
	}
	rep.Appends = len(lat)
	slices.Sort(lat)
	rep.AppendP50MS, rep.AppendP95MS, rep.AppendMaxMS = percentile(lat, 50), percentile(lat, 95), lat[len(lat)-1]

	// Idle: wait out the passes still due, then measure.
	time.Sleep(time.Second)
	for len(passes) > 0 {
		<-passes
	}
	cpu0, wall0 := CPUTime(), time.Now()
	select {
	case <-time.After(o.Idle):
	case <-ctx.Done():
		return rep, ctx.Err()
	}
	rep.IdleSeconds = time.Since(wall0).Seconds()
	rep.IdleCPUPct = 100 * (CPUTime() - cpu0).Seconds() / rep.IdleSeconds
	for len(passes) > 0 {
		r := <-passes
		rep.IdlePasses++
		rep.IdleRowsAdded += r.Summary.Inserted
	}

	if err := stopWatch(); err != nil {
		return rep, fmt.Errorf("bench watch: %w", err)
	}
	res, err := db.Purge(ctx, sqlite.PurgeSelector{Session: sess.id, Tool: cortex.ToolClaude, KeepFile: true}, nil, false)
	if err != nil {
		return rep, fmt.Errorf("bench watch: purge the bench session: %w", err)
	}
	rep.Purged = res.Rows
	return rep, nil
}

// benchSession is the Claude transcript Watch appends to.
type benchSession struct {
	id, path, salt string
	n              int
}

func newBenchSession(dir string) *benchSession {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	id := fmt.Sprintf("%s-%s-%s-%s-%s", h[:8], h[8:12], h[12:16], h[16:20], h[20:32])
	return &benchSession{id: id, path: filepath.Join(dir, id+".jsonl"), salt: h[:10]}
}

// token is the word the i-th record says, found by nothing else.
func (s *benchSession) token(i int) string {
	return fmt.Sprintf("cortexbench%sn%d", s.salt, i+1)
}

// append writes one typed user record saying tok.
func (s *benchSession) append(tok string) error {
	s.n++
	uuid := fmt.Sprintf("%s-%012d", s.id[:23], s.n)
	rec := map[string]any{
		"type": "user", "sessionId": s.id, "uuid": uuid, "cwd": "/tmp/cortex-bench-watch",
		"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "userType": "external",
		"message": map[string]any{"role": "user", "content": "bench watch record " + tok},
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("bench watch: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("bench watch: %w", err)
	}
	return f.Close()
}
