// Package gen scales a small corpus of real agent transcripts (Claude Code,
// OpenAI Codex CLI, Gemini CLI) to any size for ingest and query benchmarks.
//
// Generate copies the whole source corpus again and again until a byte
// target is reached. Every copy is byte-for-byte the source except for
// same-length rewrites:
//
//   - every UUID becomes a fresh UUID derived from (seed, copy, original), so
//     links inside a copy (sessionId, parentUuid, tool_use_id, …) stay
//     consistent while copies never share ids;
//   - every RFC 3339 timestamp is shifted so that each session ends at a
//     deterministic point within the window (90 days unless
//     Options.Window says otherwise) before Options.Now (the
//     fraction and zone text are kept, so the string length never changes);
//   - the tails of toolu_/msg_/req_/call_ ids and Claude subagent ids are
//     re-drawn per copy.
//
// Line structure is untouched (joined "}{" records, missing final newlines,
// megabyte lines), so the output exercises the same parser paths as the
// real data. Output files use the agents' default folder layouts:
//
//	claude/projects/<encoded-cwd>/<session-uuid>.jsonl
//	claude/projects/<encoded-cwd>/<session-uuid>/subagents/agent-<id>.jsonl (+ .meta.json)
//	claude/projects/<encoded-cwd>/agent-<hex>.jsonl
//	codex/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<session-uuid>.jsonl
//	gemini/tmp/<project-hash>/chats/session-YYYY-MM-DDTHH-MM-<8 hex>.json
//
// The source is scanned once; each copy only re-renders the recorded
// patches, so generation runs at disk-write speed.
package gen

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Window is the default period before Options.Now over which sessions are
// spread.
const Window = 90 * 24 * time.Hour

// progressStep is how many bytes are written between Progress calls.
const progressStep = 16 << 20

// endMargin keeps every shifted session end strictly before Now.
const endMargin = 60 // seconds

// Options configures Generate.
type Options struct {
	SourceDir   string    // the real corpus root (e.g. ../shared/corpus/real)
	OutDir      string    // created if missing; must be empty or not exist (error otherwise, unless Overwrite)
	TargetBytes int64     // stop after writing at least this many transcript bytes
	Seed        int64     // determinism: same inputs + seed => byte-identical output
	Now         time.Time // sessions are spread over the Window before Now; zero means time.Now()
	// Window is the period over which sessions end (zero means the
	// default, 90 days). A short one (a day) makes a slice of new
	// transcripts as a store receives them; a session longer than the
	// window starts before it.
	Window    time.Duration
	Overwrite bool                // allow a non-empty OutDir; its claude/, codex/ and gemini/ trees are removed first
	Progress  func(written int64) // optional, called about every 16 MB of transcript bytes
}

// Result reports what was written. Files, Bytes and Lines count transcript
// files only; Claude subagent .meta.json sidecars are written but not
// counted.
type Result struct {
	Files  int                  // transcript files written
	Bytes  int64                // transcript bytes written
	Lines  int64                // physical lines written (a final unterminated line counts)
	Copies int                  // copies of the source corpus started (the last may be partial)
	ByTool map[string]ToolStats // per tool: "claude", "codex", "gemini"
}

// ToolStats is the per-tool part of Result.
type ToolStats struct {
	Files int   // transcript files written
	Bytes int64 // transcript bytes written
}

// fileEvent describes one written transcript; tests use it to pair outputs
// with their sources.
type fileEvent struct {
	Copy int
	Src  string // slash-separated, relative to SourceDir
	Dst  string // slash-separated, relative to OutDir
	Tool string
}

// Generate writes a synthetic corpus of at least opts.TargetBytes transcript
// bytes derived from the real corpus in opts.SourceDir into opts.OutDir.
func Generate(ctx context.Context, opts Options) (Result, error) {
	return generate(ctx, opts, nil)
}

// generate is Generate with an optional per-file callback.
func generate(ctx context.Context, opts Options, onFile func(fileEvent)) (Result, error) {
	if err := validate(&opts); err != nil {
		return Result{}, err
	}
	c, err := discover(ctx, opts.SourceDir)
	if err != nil {
		return Result{}, fmt.Errorf("generate: %w", err)
	}
	if err := prepareOut(opts.OutDir, opts.Overwrite); err != nil {
		return Result{}, fmt.Errorf("generate: %w", err)
	}
	g := &generator{
		opts:   opts,
		now:    opts.Now.Unix(),
		corpus: c,
		plan:   planner{seed: opts.Seed, used: map[string]struct{}{}},
		dirs:   map[string]struct{}{},
		w:      bufio.NewWriterSize(nil, 256<<10),
		onFile: onFile,
		res:    Result{ByTool: map[string]ToolStats{}},
	}
	if err := g.run(ctx); err != nil {
		return g.res, fmt.Errorf("generate: %w", err)
	}
	return g.res, nil
}

// validate checks opts and fills in defaults.
func validate(opts *Options) error {
	switch {
	case opts.SourceDir == "":
		return errors.New("generate: SourceDir is required")
	case opts.OutDir == "":
		return errors.New("generate: OutDir is required")
	case opts.TargetBytes <= 0:
		return fmt.Errorf("generate: TargetBytes must be positive, got %d", opts.TargetBytes)
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	return nil
}

// prepareOut creates dir or checks that it may be written to.
func prepareOut(dir string, overwrite bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create output dir: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read output dir: %w", err)
	case len(entries) == 0:
		return nil
	case !overwrite:
		return fmt.Errorf("output dir %s is not empty (set Overwrite to replace it)", dir)
	}
	for _, tool := range []string{toolClaude, toolCodex, toolGemini} {
		if err := os.RemoveAll(filepath.Join(dir, tool)); err != nil {
			return fmt.Errorf("clear output dir: %w", err)
		}
	}
	return nil
}

// shift is the time transformation of one unit in one copy.
type shift struct {
	delta int64 // seconds added to every timestamp
	end   int64 // Unix seconds of the unit's latest anchoring timestamp after the shift
}

// generator holds the state of one Generate call.
type generator struct {
	opts         Options
	now          int64
	corpus       *corpus
	plan         planner
	dirs         map[string]struct{}
	w            *bufio.Writer
	onFile       func(fileEvent)
	res          Result
	lastProgress int64
}

// run writes copies until the target is reached.
func (g *generator) run(ctx context.Context) error {
	for k := 0; g.res.Bytes < g.opts.TargetBytes; k++ {
		g.res.Copies = k + 1
		for _, u := range g.order(k) {
			if g.res.Bytes >= g.opts.TargetBytes {
				break
			}
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("copy %d: %w", k, err)
			}
			if err := g.writeUnit(u, k); err != nil {
				return fmt.Errorf("copy %d: %w", k, err)
			}
		}
	}
	return nil
}

// order returns the units of copy k: each tool's units in a per-copy
// shuffled order, interleaved round-robin (gemini, codex, claude) so that a
// partial copy still contains every tool.
func (g *generator) order(k int) []*unit {
	tools := []string{toolGemini, toolCodex, toolClaude}
	groups := make([][]*unit, len(tools))
	longest := 0
	for i, t := range tools {
		for _, u := range g.corpus.units {
			if u.tool == t {
				groups[i] = append(groups[i], u)
			}
		}
		shuffle(groups[i], rng{state: hash4(saltOrder, g.opts.Seed, k, uint64(i))})
		longest = max(longest, len(groups[i]))
	}
	out := make([]*unit, 0, len(g.corpus.units))
	for j := range longest {
		for _, grp := range groups {
			if j < len(grp) {
				out = append(out, grp[j])
			}
		}
	}
	return out
}

// shuffle permutes us deterministically (Fisher-Yates).
func shuffle(us []*unit, r rng) {
	for j := len(us) - 1; j > 0; j-- {
		m := r.intn(j + 1)
		us[j], us[m] = us[m], us[j]
	}
}

// shiftFor places unit u of copy k: its latest anchoring timestamp lands at
// a deterministic, uniformly spread point such that the whole session lies
// within the window before Now (it ends there when it is longer).
func (g *generator) shiftFor(u *unit, k int) shift {
	window := int64(cmp.Or(g.opts.Window, Window) / time.Second)
	avail := max(window-u.span-2*endMargin, 0)
	end := g.now - endMargin - int64(hash4(saltTime, g.opts.Seed, k, u.keyH)%uint64(avail+1))
	if !u.hasTime {
		return shift{end: end}
	}
	return shift{delta: end - u.maxTime, end: end}
}

// writeUnit writes every file of unit u for copy k.
func (g *generator) writeUnit(u *unit, k int) error {
	sh := g.shiftFor(u, k)
	cp := copyParams{seed: g.opts.Seed, k: k, delta: sh.delta}
	for _, o := range g.plan.plan(u, k, sh) {
		if err := g.writeFile(o.rel, o.src, cp); err != nil {
			return err
		}
		if o.metaRel != "" {
			if err := g.writeFile(o.metaRel, o.src.meta, cp); err != nil {
				return err
			}
		}
		if g.onFile != nil {
			g.onFile(fileEvent{Copy: k, Src: o.src.rel, Dst: o.rel, Tool: u.tool})
		}
		g.count(o.src)
	}
	return nil
}

// count adds a written transcript to the result and reports progress.
func (g *generator) count(f *srcFile) {
	n := int64(len(f.data))
	g.res.Files++
	g.res.Bytes += n
	g.res.Lines += f.lines
	ts := g.res.ByTool[f.tool]
	ts.Files++
	ts.Bytes += n
	g.res.ByTool[f.tool] = ts
	if g.opts.Progress != nil && g.res.Bytes/progressStep != g.lastProgress {
		g.lastProgress = g.res.Bytes / progressStep
		g.opts.Progress(g.res.Bytes)
	}
}

// writeFile writes the copy of src to rel (relative to OutDir).
func (g *generator) writeFile(rel string, src *srcFile, cp copyParams) error {
	full := filepath.Join(g.opts.OutDir, filepath.FromSlash(rel))
	if err := g.mkdir(filepath.Dir(full)); err != nil {
		return err
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create output file: %w", err)
	}
	g.w.Reset(f)
	err = writePatched(g.w, src.data, src.patches, cp)
	if err == nil {
		err = g.w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s (from %s): %w", full, src.rel, err)
	}
	return nil
}

// mkdir creates dir once per run.
func (g *generator) mkdir(dir string) error {
	if _, ok := g.dirs[dir]; ok {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output dir: %w", err)
	}
	g.dirs[dir] = struct{}{}
	return nil
}
