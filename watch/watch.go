// Package watch keeps the store current while agents write: it watches the
// transcript folders with fsnotify and runs small, checkpointed ingest
// passes (ingest.Index with only the changed files) shortly after each
// change, plus a periodic full rescan as a safety net for missed events.
//
// One pass runs at a time; changes arriving meanwhile are queued for the
// next. Failures (a database locked by another process, unreadable files)
// are logged and retried with exponential backoff; the watcher itself only
// stops when its context is canceled.
package watch

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
)

// Defaults and limits of the watcher's timing.
const (
	// DefaultDebounce is the quiet time after a change before it is ingested.
	DefaultDebounce = 200 * time.Millisecond
	// DefaultRescan is the interval of full rescans of the roots.
	DefaultRescan = 30 * time.Second
	// MaxDelay bounds how long a changed file waits while it keeps changing
	// (a constantly appended transcript is still ingested once per MaxDelay).
	MaxDelay = time.Second
	// FallbackRescan is the rescan interval when file notifications are
	// unavailable (too many watches, no inotify).
	FallbackRescan = 2 * time.Second

	minBackoff = 250 * time.Millisecond
	maxBackoff = 30 * time.Second
	// eventBuffer queues notifications while the loop is busy (walking a new
	// folder), on top of the kernel's own queue.
	eventBuffer = 4096
)

// Options configures Run.
type Options struct {
	// Roots are the folders (or files) to watch; required. Roots that do not
	// exist yet are picked up when they are created.
	Roots []string
	// Index is the template of every ingest pass: Hostname, Workers, Logger,
	// Redactor, Codec, NoEvents, … Paths is set by the watcher and Force is
	// ignored.
	Index ingest.Options
	// Debounce is the quiet time after the last change before the changed
	// files are ingested (default DefaultDebounce). A file that keeps
	// changing is ingested at least every max(MaxDelay, Debounce).
	Debounce time.Duration
	// Rescan is the interval of full rescans of Roots, which catch missed
	// events, new folders and rename races (default DefaultRescan).
	Rescan time.Duration
	// Logger receives warnings (failed passes, retries) and debug detail
	// (default: discard). It is also the ingest logger unless Index.Logger
	// is set.
	Logger *slog.Logger
	// OnIngest, when set, is called after each ingest pass, from the
	// watcher's goroutine (it should return quickly).
	OnIngest func(Report)
}

// Report describes one ingest pass.
type Report struct {
	// Paths are the files ingested, or the roots for a full pass.
	Paths []string
	// Full is set for a full scan of the roots (at start and every Rescan).
	Full bool
	// Summary is what ingest.Index reported; Summary.Errors lists files
	// that failed (they are retried).
	Summary ingest.Summary
	// Err is the pass's error, if ingest.Index failed as a whole (it is
	// retried).
	Err error
	// Took is the pass's wall time.
	Took time.Duration
}

// Run watches opts.Roots and ingests changed transcripts into store until
// ctx is canceled. It starts with one full ingest of the roots, so nothing
// written while the watcher was down is missed. It returns nil on a clean
// shutdown, and an error only for invalid options.
func Run(ctx context.Context, store ingest.Store, opts Options) error {
	if store == nil {
		return cortex.Errorf(cortex.CodeInvalid, "watch: no store")
	}
	if len(opts.Roots) == 0 {
		return cortex.Errorf(cortex.CodeInvalid, "watch: no folders to watch")
	}
	w, err := newWatcher(store, opts)
	if err != nil {
		return err
	}
	return w.run(ctx)
}

// watcher is the state of one Run. Everything but the ingest itself runs on
// the loop goroutine, so it needs no locking.
type watcher struct {
	store ingest.Store
	opts  Options
	log   *slog.Logger
	now   func() time.Time

	notifier func() (*fsnotify.Watcher, error)
	fsw      *fsnotify.Watcher // nil when notifications are unavailable
	degraded bool              // watch limit hit: rely on rescans
	rescan   time.Duration

	roots   []*root
	watched map[string]watchKind // folders with an fsnotify watch

	// pending maps changed files to the time of their first change since
	// their last pass; lastChange is the newest change of any.
	pending    map[string]time.Time
	lastChange time.Time
	// retries holds the backoff of files whose last pass failed.
	retries map[string]*backoff
	// fullDue asks for a full pass; fullRetry is its backoff after a failed
	// one; nextRescan schedules the periodic one.
	fullDue    bool
	fullRetry  backoff
	nextRescan time.Time

	running bool // a pass is in flight
}

// root is one watched root.
type root struct {
	path     string // absolute, as given
	resolved string // symlinks resolved, when it exists
	exists   bool
	isDir    bool
	ancestor string // nearest existing parent being watched while missing
}

// watchKind says why a folder is watched (a folder may be several).
type watchKind uint8

const (
	kindTree       watchKind = 1 << iota // inside a root folder: files there count
	kindAncestor                         // parent of a missing root: waiting for it
	kindFileParent                       // folder of a root that is a file
)

// backoff is the retry state of a failing file or of the full pass.
type backoff struct {
	attempt int
	until   time.Time
}

// next records a failure and returns the delay before the next attempt:
// 250 ms doubling up to 30 s, minus up to 20 % jitter.
func (b *backoff) next(now time.Time) time.Duration {
	b.attempt++
	d := maxBackoff
	if b.attempt <= 8 {
		d = min(maxBackoff, minBackoff<<(b.attempt-1))
	}
	d -= time.Duration(rand.Int64N(int64(d)/5 + 1))
	b.until = now.Add(d)
	return d
}

func newWatcher(store ingest.Store, opts Options) (*watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Rescan <= 0 {
		opts.Rescan = DefaultRescan
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Index.Logger == nil {
		opts.Index.Logger = opts.Logger
	}
	opts.Index.Force = false
	w := &watcher{
		store: store, opts: opts, log: opts.Logger, now: time.Now, rescan: opts.Rescan,
		notifier: func() (*fsnotify.Watcher, error) { return fsnotify.NewBufferedWatcher(eventBuffer) },
		watched:  map[string]watchKind{}, pending: map[string]time.Time{}, retries: map[string]*backoff{},
	}
	seen := map[string]bool{}
	for _, p := range opts.Roots {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, cortex.WrapError(cortex.CodeInvalid, err, "watch: invalid path %q", p)
		}
		if !seen[abs] {
			seen[abs] = true
			w.roots = append(w.roots, &root{path: abs})
		}
	}
	if len(w.roots) == 0 {
		return nil, cortex.Errorf(cortex.CodeInvalid, "watch: no folders to watch")
	}
	return w, nil
}

// passResult is what a finished ingest pass hands back to the loop.
type passResult struct {
	paths []string
	full  bool
	sum   ingest.Summary
	err   error
	took  time.Duration
}

func (w *watcher) run(ctx context.Context) error {
	fsw, err := w.notifier()
	if err != nil {
		w.degrade("cannot watch for file changes", err)
	} else {
		w.fsw = fsw
		defer func() {
			if w.fsw != nil {
				w.fsw.Close()
			}
		}()
	}
	// Watches first, then the initial full pass: a file written in between
	// is seen by one or the other.
	w.syncRoots()
	w.fullDue = true
	w.logStart()

	results := make(chan passResult, 1)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if ctx.Err() == nil {
			w.maybeStart(ctx, results)
		}
		timer.Reset(w.nextWake())
		var events <-chan fsnotify.Event
		var errs <-chan error
		if w.fsw != nil {
			events, errs = w.fsw.Events, w.fsw.Errors
		}
		select {
		case <-ctx.Done():
			if w.running {
				<-results // ingest stops at its next check of ctx
			}
			return nil
		case ev, ok := <-events:
			if !ok {
				w.stopNotify("file notifications stopped", errors.New("event channel closed"))
				continue
			}
			w.handleEvent(ev)
		case err, ok := <-errs:
			if !ok {
				w.stopNotify("file notifications stopped", errors.New("error channel closed"))
				continue
			}
			w.handleNotifyError(err)
		case r := <-results:
			w.running = false
			if ctx.Err() != nil {
				return nil
			}
			w.finish(r)
		case <-timer.C:
		}
	}
}

func (w *watcher) logStart() {
	var watching, waiting []string
	for _, r := range w.roots {
		if r.exists {
			watching = append(watching, r.resolved)
		} else {
			waiting = append(waiting, r.path)
		}
	}
	w.log.Debug("watch: started", "roots", watching, "waiting_for", waiting, "folders_watched", len(w.watched),
		"debounce", w.opts.Debounce, "rescan", w.rescan, "notifications", w.fsw != nil && !w.degraded)
}

// nextWake is how long the loop may sleep before something is due. While
// a pass runs nothing else can start: its result wakes the loop.
func (w *watcher) nextWake() time.Duration {
	if w.running {
		return time.Hour
	}
	now := w.now()
	next := w.nextRescan
	if w.nextRescan.IsZero() {
		next = now.Add(w.rescan)
	}
	if w.fullDue {
		next = earliest(next, w.fullRetry.until)
	}
	if at, ok := w.pendingDue(now); ok {
		next = earliest(next, at)
	}
	return max(time.Millisecond, next.Sub(now))
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// pendingDue returns when the next pass over pending files is due: the
// debounce after the last change, or MaxDelay after the oldest ready change,
// whichever is first; files in backoff wait for their retry time.
func (w *watcher) pendingDue(now time.Time) (time.Time, bool) {
	var due time.Time
	found := false
	maxDelay := max(MaxDelay, w.opts.Debounce)
	quiet := w.lastChange.Add(w.opts.Debounce)
	for p, first := range w.pending {
		at := earliest(quiet, first.Add(maxDelay))
		if b := w.retries[p]; b != nil && b.until.After(at) {
			at = b.until
		}
		if !found || at.Before(due) {
			due, found = at, true
		}
	}
	return due, found
}

// maybeStart starts a pass when one is due and none is running.
func (w *watcher) maybeStart(ctx context.Context, results chan<- passResult) {
	if w.running {
		return
	}
	now := w.now()
	if !w.nextRescan.IsZero() && !now.Before(w.nextRescan) {
		w.fullDue = true
	}
	if w.fullDue && !now.Before(w.fullRetry.until) {
		w.startFull(ctx, results)
		return
	}
	due, ok := w.pendingDue(now)
	if !ok || now.Before(due) {
		return
	}
	var paths []string
	for p := range w.pending {
		if b := w.retries[p]; b != nil && now.Before(b.until) {
			continue
		}
		delete(w.pending, p)
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			// Gone (renamed, deleted) or not a plain file: nothing to read.
			delete(w.retries, p)
			continue
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return
	}
	slices.Sort(paths)
	w.start(ctx, results, paths, false)
}

// startFull re-syncs the watches and starts a full pass over the roots.
func (w *watcher) startFull(ctx context.Context, results chan<- passResult) {
	w.syncRoots()
	w.fullDue = false
	w.nextRescan = time.Time{}
	var paths []string
	for _, r := range w.roots {
		if r.exists {
			paths = append(paths, r.resolved)
		}
	}
	// The walk covers every file changed so far (retries included, whatever
	// their backoff): changes from now on queue for the next pass.
	clear(w.pending)
	if len(paths) == 0 {
		w.finish(passResult{full: true})
		return
	}
	w.start(ctx, results, paths, true)
}

// start runs one ingest.Index on its own goroutine.
func (w *watcher) start(ctx context.Context, results chan<- passResult, paths []string, full bool) {
	w.running = true
	iopts := w.opts.Index
	iopts.Paths = paths
	store := w.store
	go func() {
		began := time.Now()
		sum, err := ingest.Index(ctx, store, iopts)
		results <- passResult{paths: paths, full: full, sum: sum, err: err, took: time.Since(began)}
	}()
}

// finish accounts a pass: reports it, and schedules retries of what failed.
func (w *watcher) finish(r passResult) {
	now := w.now()
	if r.full {
		w.nextRescan = now.Add(w.rescan)
	}
	if w.opts.OnIngest != nil {
		w.opts.OnIngest(Report{Paths: r.paths, Full: r.full, Summary: r.sum, Err: r.err, Took: r.took})
	}
	w.log.Debug("watch: ingest pass", "full", r.full, "files", len(r.paths), "rows", r.sum.Inserted,
		"errors", len(r.sum.Errors), "took", r.took)

	if r.err != nil && cortex.ErrorCode(r.err) != cortex.CodeNotFound {
		// The pass failed as a whole (store busy or unavailable): retry it.
		if r.full {
			w.fullDue = true
			d := w.fullRetry.next(now)
			w.log.Warn("watch: full scan failed; retrying", "err", r.err, "cause", errors.Unwrap(r.err),
				"attempt", w.fullRetry.attempt, "retry_in", d.Round(time.Millisecond))
			return
		}
		var d time.Duration
		attempt := 0
		for _, p := range r.paths {
			d, attempt = w.retry(p, now)
		}
		w.log.Warn("watch: ingest failed; retrying", "err", r.err, "cause", errors.Unwrap(r.err),
			"files", len(r.paths), "attempt", attempt, "retry_in", d.Round(time.Millisecond))
		return
	}
	// NotFound: every path vanished before the pass read it; nothing to do.
	failed := map[string]bool{}
	for _, e := range r.sum.Errors {
		if e.Unsupported {
			// Content that is not a transcript does not become one by
			// retrying; the next change of the file is looked at again.
			w.log.Debug("watch: not a transcript", "path", e.Path, "err", e.Error)
			continue
		}
		failed[e.Path] = true
		d, attempt := w.retry(e.Path, now)
		w.log.Warn("watch: file not ingested; retrying", "path", e.Path, "err", e.Error,
			"attempt", attempt, "retry_in", d.Round(time.Millisecond))
	}
	if r.full {
		w.fullRetry = backoff{}
		for p := range w.retries {
			if !failed[p] {
				delete(w.retries, p)
			}
		}
		return
	}
	for _, p := range r.paths {
		if !failed[p] {
			delete(w.retries, p)
		}
	}
}

// retry queues path again after its backoff.
func (w *watcher) retry(path string, now time.Time) (time.Duration, int) {
	b := w.retries[path]
	if b == nil {
		b = &backoff{}
		w.retries[path] = b
	}
	d := b.next(now)
	if _, ok := w.pending[path]; !ok {
		w.pending[path] = now
	}
	return d, b.attempt
}

// enqueue marks a changed file for the next pass.
func (w *watcher) enqueue(path string) {
	now := w.now()
	if _, ok := w.pending[path]; !ok {
		w.pending[path] = now
	}
	w.lastChange = now
}

// handleNotifyError handles an error from fsnotify: a lost event means a
// full rescan.
func (w *watcher) handleNotifyError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.log.Warn("watch: too many file changes at once, some were not seen; rescanning", "err", err)
	} else {
		w.log.Warn("watch: file notification error; rescanning", "err", err)
	}
	w.fullDue = true
}

// degrade switches to rescans only, with a short interval.
func (w *watcher) degrade(what string, err error) {
	if w.degraded {
		return
	}
	w.degraded = true
	w.rescan = min(w.opts.Rescan, FallbackRescan)
	if !w.nextRescan.IsZero() {
		w.nextRescan = earliest(w.nextRescan, w.now().Add(w.rescan))
	}
	msg := "watch: " + what + "; falling back to a full rescan every " + w.rescan.String()
	if isWatchLimit(err) {
		msg += " (raise the limit, e.g. sysctl fs.inotify.max_user_watches=524288)"
	}
	w.log.Warn(msg, "err", err)
}
