package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
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
	sources, err := store.Sources(ctx)
	if err != nil {
		return sum, err
	}
	var jobs []job
	var total int64
	for _, c := range d.files {
		sum.FilesSeen++
		prev, has := sources[c.path]
		if !opts.Since.IsZero() && c.mtimeNS < opts.Since.UnixNano() {
			sum.FilesOlder++
			continue
		}
		if has && !opts.Force && prev.Complete && prev.Size == c.size && prev.ModTimeNS == c.mtimeNS {
			sum.FilesUnchanged++
			continue
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
		go func() {
			defer wg.Done()
			r := newReader(store, &opts)
			for j := range jobCh {
				r.file(wctx, j, out)
			}
		}()
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

	// The writer: this goroutine. Batches of one file arrive in order; the
	// writer groups whatever is queued into one transaction.
	var storeErr error
	closed := false
	for !closed {
		m, ok := <-out
		if !ok {
			break
		}
		group := []batchMsg{m}
		records, bytes := len(m.b.Records), m.b.RawBytes()
	drain:
		for records < maxGroupRecords && bytes < maxGroupBytes && len(group) < maxGroupBatches {
			select {
			case m2, ok := <-out:
				if !ok {
					closed = true
					break drain
				}
				group = append(group, m2)
				records += len(m2.b.Records)
				bytes += m2.b.RawBytes()
			default:
				break drain
			}
		}
		var batches []cortex.ImportBatch
		for _, g := range group {
			if g.early == nil {
				batches = append(batches, g.b)
			}
		}
		var results []cortex.ImportResult
		var err error
		switch {
		case storeErr != nil:
			err = storeErr
		case ctx.Err() != nil:
			err = context.Canceled
		case len(batches) > 0:
			results, err = store.ImportBatches(ctx, batches)
			if err != nil && ctx.Err() == nil && cortex.ErrorCode(err) == cortex.CodeUnavailable {
				storeErr = err
				cancelWorkers()
			}
		}
		i := 0
		for _, g := range group {
			if g.early != nil {
				prog.FilesDone++
				sum.merge(g.stats)
				if g.stats.err != "" && g.stats.err != "canceled" {
					sum.Errors = append(sum.Errors, FileError{Path: g.b.Source.Path, Error: g.stats.err})
				}
				continue
			}
			if err == nil {
				r := results[i]
				sum.Inserted += r.Inserted
				sum.Updated += r.Updated
				sum.Duplicates += r.Duplicates
				prog.Inserted += r.Inserted
				prog.BytesDone += g.bytes
				sum.BytesRead += g.bytes
			}
			i++
			g.done <- err
			if !g.last {
				continue
			}
			st := g.stats
			if err != nil && st.err == "" {
				st.outcome = "failed"
				st.err = cortex.ErrorMessage(err)
				if errors.Is(err, context.Canceled) {
					st.err = "canceled"
				}
			}
			prog.FilesDone++
			sum.merge(st)
			if st.err != "" && st.err != "canceled" {
				sum.Errors = append(sum.Errors, FileError{Path: g.b.Source.Path, Error: st.err})
			}
		}
		if opts.Progress != nil {
			opts.Progress(prog)
		}
	}
	sum.Elapsed = Duration(opts.Now().Sub(start))
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
