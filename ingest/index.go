package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/cortexhq/cortex"
)

// Limits of one write transaction assembled by the writer.
const (
	maxGroupRecords = 20000
	maxGroupBytes   = 32 << 20
	maxGroupBatches = 64
)

// job is one file to read, with the checkpoint to start from.
type job struct {
	c    candidate
	prev cortex.Source
	has  bool
}

// batchMsg carries a batch from a worker to the writer. done receives the
// commit outcome.
type batchMsg struct {
	b     cortex.ImportBatch
	done  chan error
	last  bool          // last batch of the file
	stats fileStats     // per-file counters, merged by the writer on last
	bytes int64         // file bytes covered by this batch
	early *cortex.Error // set when the file failed before any batch
}

// fileStats are the per-file counters a worker collects.
type fileStats struct {
	outcome     string // read, resumed, rewritten, unsupported, empty, failed
	records     int64
	skipped     map[string]int64
	parseErrors int64
	warnings    int64
	unknown     int64
	blobBytes   int64 // opaque blob bytes left out of stored records
	pending     bool
	err         string
}

// Index discovers transcript files and stores their records. It returns a
// summary even when ctx is canceled part-way (Canceled is then set):
// everything committed before the cancellation stays consistent, and the
// next run resumes from the stored checkpoints.
func Index(ctx context.Context, store Store, opts Options) (Summary, error) {
	if err := opts.defaults(); err != nil {
		return Summary{}, err
	}
	start := opts.Now()
	sum := Summary{Skipped: map[string]int64{}}
	if ps, ok := store.(PendingStore); ok && !opts.NoEvents {
		// Rows stored before an event kind existed get its events first,
		// from the stored records (once; a concurrent run is not waited for).
		res, ran, err := BackfillPending(ctx, ps, BackfillOptions{Hostname: opts.Hostname, Holder: "index"})
		switch {
		case err != nil && cortex.ErrorCode(err) == cortex.CodeBusy:
			opts.Logger.Info("pending backfill runs elsewhere", "err", err)
		case err != nil:
			return sum, err
		case ran:
			sum.Backfilled = &res
		}
	}
	d, err := discover(ctx, opts.Paths, opts.Home)
	if err != nil {
		if ctx.Err() != nil {
			sum.Canceled = true
			return sum, nil
		}
		return sum, err
	}
	sum.Roots = d.rootsUsed
	sum.Missing = d.missing
	sum.Symlinks = d.symlinks
	sum.Errors = append(sum.Errors, d.walkErrs...)
	if len(opts.Paths) > 0 && len(d.missing) == len(opts.Paths) {
		return sum, cortex.Errorf(cortex.CodeNotFound, "no such file or folder: %s", joinQuoted(d.missing))
	}
	sources, err := readSources(ctx, store, d.files)
	if err != nil {
		return sum, err
	}
	var jobs []job
	var total int64
	moves := newMoves(sources, d.files)
	for _, c := range d.files {
		sum.FilesSeen++
		prev, has := sources[c.path]
		if !opts.Since.IsZero() && c.mtimeNS < opts.Since.UnixNano() {
			sum.FilesOlder++
			continue
		}
		if !has && c.alias != "" {
			// A file the store knows by the path through a link: it
			// follows the file to its resolved path, like a moved one.
			if prev, has = sources[c.alias]; has {
				sum.FilesMoved++
			}
		}
		if !has {
			// A new path may be a known file that was moved or renamed.
			if prev, has = moves.find(c); has {
				sum.FilesMoved++
			}
		}
		if has && !opts.Force && prev.Complete && prev.Size == c.size && prev.ModTimeNS == c.mtimeNS &&
			prev.Path == c.path && !resniff(c, prev) {
			sum.FilesUnchanged++
			continue
		}
		if has && prev.ParserState == nil {
			if prev, err = fullSource(ctx, store, prev); err != nil {
				return sum, err
			}
		}
		jobs = append(jobs, job{c: c, prev: prev, has: has})
		total += c.size
	}
	prog := Progress{FilesTotal: len(jobs), BytesTotal: total}
	if opts.Progress != nil {
		opts.Progress(prog)
	}

	wctx, cancelWorkers := context.WithCancel(ctx)
	defer cancelWorkers()
	jobCh := make(chan job)
	out := make(chan batchMsg, opts.Workers*maxInFlight)
	var wg sync.WaitGroup
	for i := 0; i < opts.Workers; i++ {
		wg.Add(1)
		go pprof.Do(wctx, pprof.Labels("stage", "parse"), func(wctx context.Context) {
			defer wg.Done()
			r := newReader(store, &opts)
			for j := range jobCh {
				r.file(wctx, j, out)
			}
		})
	}
	go func() {
		defer close(jobCh)
		for _, j := range jobs {
			select {
			case jobCh <- j:
			case <-wctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(out)
	}()

	// The search index follows the rows on the cores the parsers and the
	// writer leave free; with no core to spare (two or fewer) it indexes
	// once the rows are stored, which stores them sooner and makes them
	// searchable no later.
	var search *searchAlong
	if ss, ok := store.(SearchStore); ok {
		search = startSearch(ctx, ss, start, opts.Now, opts.SearchProgress)
		if !opts.searchAlong() {
			search.wakeOnlyAtEnd()
		}
		search.stored() // rows an earlier run left unindexed
	}

	// The writer: this goroutine. Batches of one file arrive in order; the
	// writer groups whatever is queued into one transaction.
	w := &writer{store: store, sum: &sum, prog: &prog, rejected: map[string]error{}}
	for {
		group, more := gather(out)
		if len(group) > 0 {
			w.commit(ctx, group, cancelWorkers)
			search.stored()
			if opts.Progress != nil {
				opts.Progress(prog)
			}
		}
		if !more {
			break
		}
	}
	storeErr := w.storeErr
	if bs, ok := store.(SkillBodyStore); ok && storeErr == nil && ctx.Err() == nil && !opts.NoEvents {
		// New skill loads get their body version (and loads stored before
		// versions existed get theirs on the first run).
		res, err := ResolveSkillBodies(ctx, bs, SkillBodyOptions{Codec: opts.Codec, Now: opts.Now})
		if err != nil && ctx.Err() == nil {
			storeErr = err
		}
		sum.SkillBodies = res.Bodies
	}
	sum.Elapsed = Duration(opts.Now().Sub(start))
	if search != nil {
		ss, err := search.finish()
		sum.Search = &ss
		if err != nil && storeErr == nil {
			storeErr = err
		}
	}
	if secs := time.Duration(sum.Elapsed).Seconds(); secs > 0 {
		sum.RecordsPerS = math.Round(float64(sum.Records)/secs*10) / 10
		sum.RowsPerS = math.Round(float64(sum.Inserted)/secs*10) / 10
		sum.MBPerS = math.Round(float64(sum.BytesRead)/1e6/secs*100) / 100
	}
	if ctx.Err() != nil {
		sum.Canceled = true
	}
	if storeErr != nil {
		return sum, storeErr
	}
	return sum, nil
}

// gather waits for one batch, then takes whatever else is queued, up to
// the transaction limits. more is false once the channel is closed.
func gather(out <-chan batchMsg) (group []batchMsg, more bool) {
	m, ok := <-out
	if !ok {
		return nil, false
	}
	group = []batchMsg{m}
	records, bytes := len(m.b.Records), m.b.RawBytes()
	for records < maxGroupRecords && bytes < maxGroupBytes && len(group) < maxGroupBatches {
		select {
		case m, ok := <-out:
			if !ok {
				return group, false
			}
			group = append(group, m)
			records += len(m.b.Records)
			bytes += m.b.RawBytes()
		default:
			return group, true
		}
	}
	return group, true
}

// writer commits batches and keeps the run's totals.
type writer struct {
	store Store
	sum   *Summary
	prog  *Progress
	// storeErr is a store failure that ends the run (disk full, I/O error).
	storeErr error
	// rejected holds files whose batch the store refused: their later
	// batches are refused too, so a checkpoint never skips past records
	// that were not stored.
	rejected map[string]error
}

// commit stores a group of batches in one transaction. When the store
// rejects the group for bad data, each batch is retried alone so only the
// offending file fails. Every batch's outcome goes back to its worker.
func (w *writer) commit(ctx context.Context, group []batchMsg, stopWorkers func()) {
	var idx []int // group positions of the batches to import
	var batches []cortex.ImportBatch
	errs := make([]error, len(group))
	for i, g := range group {
		switch {
		case g.early != nil:
		case w.storeErr != nil:
			errs[i] = w.storeErr
		case ctx.Err() != nil:
			errs[i] = context.Canceled
		case w.rejected[g.b.Source.Path] != nil:
			errs[i] = w.rejected[g.b.Source.Path]
		default:
			idx = append(idx, i)
			batches = append(batches, g.b)
		}
	}
	results := make([]cortex.ImportResult, len(group))
	if len(batches) > 0 {
		res, err := w.store.ImportBatches(ctx, batches)
		w.sum.Transactions++
		switch {
		case err == nil:
			for k, i := range idx {
				results[i] = res[k]
			}
		case ctx.Err() != nil:
			for _, i := range idx {
				errs[i] = context.Canceled
			}
		case cortex.ErrorCode(err) == cortex.CodeUnavailable || len(batches) == 1:
			if cortex.ErrorCode(err) == cortex.CodeUnavailable {
				w.storeErr = err
				stopWorkers()
			}
			for _, i := range idx {
				errs[i] = err
				w.reject(group[i].b.Source.Path, err)
			}
		default:
			for _, i := range idx {
				path := group[i].b.Source.Path
				if e := w.rejected[path]; e != nil {
					errs[i] = e
					continue
				}
				res, e := w.store.ImportBatches(ctx, []cortex.ImportBatch{group[i].b})
				if e != nil {
					errs[i] = e
					w.reject(path, e)
					continue
				}
				results[i] = res[0]
			}
		}
	}
	for i, g := range group {
		if g.early != nil {
			w.fileDone(g.b.Source.Path, g.stats)
			continue
		}
		if errs[i] == nil {
			r := results[i]
			w.sum.Inserted += r.Inserted
			w.sum.Updated += r.Updated
			w.sum.Duplicates += r.Duplicates
			w.sum.Events.Add(r.Events)
			w.sum.BytesRead += g.bytes
			w.prog.Inserted += r.Inserted
			w.prog.BytesDone += g.bytes
		}
		g.done <- errs[i]
		if !g.last {
			continue
		}
		st := g.stats
		if err := errs[i]; err != nil && st.err == "" {
			st.outcome = "failed"
			st.err = cortex.ErrorMessage(err)
			if errors.Is(err, context.Canceled) {
				st.err = "canceled"
			}
		}
		w.fileDone(g.b.Source.Path, st)
	}
}

func (w *writer) reject(path string, err error) {
	if cortex.ErrorCode(err) != cortex.CodeUnavailable {
		w.rejected[path] = err
	}
}

// fileDone accounts a finished (or failed) file.
func (w *writer) fileDone(path string, st fileStats) {
	w.prog.FilesDone++
	w.sum.merge(st)
	if st.err != "" && st.err != "canceled" {
		w.sum.Errors = append(w.sum.Errors, FileError{Path: path, Error: st.err, Unsupported: st.outcome == "unsupported"})
	}
}

// merge adds one file's counters to the summary.
func (s *Summary) merge(f fileStats) {
	switch f.outcome {
	case "read":
		s.FilesRead++
	case "resumed":
		s.FilesResumed++
	case "rewritten":
		s.FilesRewritten++
		s.FilesRead++
	case "unsupported":
		s.FilesUnsupported++
	case "empty":
		s.FilesEmpty++
	case "failed":
		s.FilesFailed++
	}
	s.Stored += f.records
	s.Records += f.records
	for k, v := range f.skipped {
		s.Skipped[k] += v
		s.Records += v
	}
	s.ParseErrors += f.parseErrors
	s.Warnings += f.warnings
	s.UnknownTypes += f.unknown
	s.BlobBytesNotStored += f.blobBytes
	if f.pending {
		s.PendingFiles++
	}
}

func joinQuoted(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(s)
	}
	return out
}

func trimFloat(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
}

// statNS returns a file's size and modification time.
func statNS(f *os.File) (int64, int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("stat: %w", err)
	}
	return fi.Size(), fi.ModTime().UnixNano(), nil
}

// maxPathReads is the most files a scan reads checkpoints of one by one
// (a watcher's pass over the files that changed); more, and it reads them
// all at once.
const maxPathReads = 64

// readSources reads the checkpoints a scan of files needs: each file's own
// when they are few and all known, else every checkpoint (a new path may
// be a known file that moved).
func readSources(ctx context.Context, store Store, files []candidate) (map[string]cortex.Source, error) {
	if sr, ok := store.(SourceReader); ok && len(files) <= maxPathReads {
		out := make(map[string]cortex.Source, len(files))
		for _, c := range files {
			s, has, err := sr.Source(ctx, c.path)
			if err != nil {
				return nil, err
			}
			if !has {
				return store.Sources(ctx)
			}
			out[c.path] = s
		}
		return out, nil
	}
	return store.Sources(ctx)
}

// fullSource reads a checkpoint again with its parser state, when the
// store left it out of Sources (see Store).
func fullSource(ctx context.Context, store Store, prev cortex.Source) (cortex.Source, error) {
	sr, ok := store.(SourceReader)
	if !ok {
		return prev, nil
	}
	full, has, err := sr.Source(ctx, prev.Path)
	if err != nil || !has {
		return prev, err
	}
	return full, nil
}
