package incident

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/findings"
	"github.com/cortexhq/cortex/store"
)

// Caps of an evidence bundle; each collection reports *_truncated when its
// cap was hit.
const (
	capSignalAnchors   = 50
	capTranscript      = 20
	capToolFailures    = 25
	capUserCorrections = 25
	capNearbyLogs      = 50
	capNearbyErrors    = 25
)

// Bounds of bundle parameters.
const (
	DefaultCorrelationMinutes = 5
	DefaultMaxBytes           = 1024
	MinMaxBytes               = 64
	MaxMaxBytes               = 1 << 20
)

func clampMaxBytes(n int) (int, error) {
	switch {
	case n < 0:
		return 0, cortex.Errorf(cortex.CodeInvalid, "max_bytes must be positive, got %d", n)
	case n == 0:
		return DefaultMaxBytes, nil
	}
	return min(max(n, MinMaxBytes), MaxMaxBytes), nil
}

// cutText bounds s to at most maxBytes bytes (on a UTF-8 boundary) plus a
// marker saying how much was cut.
func cutText(s string, maxBytes int) (string, bool) {
	if len(s) <= maxBytes {
		return s, false
	}
	head := cortex.CutUTF8(s, maxBytes)
	return head + "… [cut " + strconv.Itoa(len(s)-len(head)) + " bytes]", true
}

func boundRows(rows []*cortex.EvidenceRow, maxBytes int) {
	for _, r := range rows {
		r.Message, r.MessageTruncated = cutText(r.Message, maxBytes)
	}
}

func ptrs(rows []cortex.EvidenceRow) []*cortex.EvidenceRow {
	out := make([]*cortex.EvidenceRow, len(rows))
	for i := range rows {
		out[i] = &rows[i]
	}
	return out
}

// capRows keeps the first n rows (or the last n when fromEnd) and reports
// whether rows were dropped.
func capRows[T any](rows []T, n int, fromEnd bool) ([]T, bool) {
	if rows == nil {
		rows = []T{}
	}
	if len(rows) <= n {
		return rows, false
	}
	if fromEnd {
		return rows[len(rows)-n:], true
	}
	return rows[:n], true
}

// bundleOptions bound the evidence of one bundle.
type bundleOptions struct {
	corr     time.Duration
	maxBytes int
}

// bundle collects the bounded evidence of an incident.
func (e *Engine) bundle(ctx context.Context, l Lens, inc cortex.Incident, g *group, o bundleOptions) (cortex.Bundle, error) {
	b := cortex.Bundle{Incident: inc, CorrelationWindowMinutes: int(o.corr / time.Minute)}
	first, last := g.span()
	s := store.SessionScope{Tool: g.Key.Tool, Session: g.Key.Session, Host: g.Key.Host}
	from, to := first.Add(-o.corr), maxTime(last, g.SignalEnd).Add(o.corr)
	var err error

	// Signal anchors, with what each carries.
	ids := make([]int64, len(g.Anchors))
	info := map[int64]anchor{}
	for i, a := range g.Anchors {
		ids[i], info[a.LogID] = a.LogID, a
	}
	slices.Sort(ids)
	if b.SignalAnchors, err = e.db.RowsByID(ctx, ids); err != nil {
		return b, err
	}
	b.SignalAnchors, b.SignalAnchorsTruncated = capRows(b.SignalAnchors, capSignalAnchors, false)
	for i := range b.SignalAnchors {
		a := info[b.SignalAnchors[i].ID]
		b.SignalAnchors[i].Signals, b.SignalAnchors[i].Term = slices.Sorted(slices.Values(a.Signals)), a.Term
	}

	// The session around the incident.
	if b.TranscriptBefore, err = e.db.SessionRowsBefore(ctx, s, first, 0, capTranscript+1); err != nil {
		return b, err
	}
	b.TranscriptBefore, b.TranscriptBeforeTruncated = capRows(b.TranscriptBefore, capTranscript, true)
	if b.TranscriptAfter, err = e.db.SessionRowsAfter(ctx, s, last, math.MaxInt64, capTranscript+1); err != nil {
		return b, err
	}
	b.TranscriptAfter, b.TranscriptAfterTruncated = capRows(b.TranscriptAfter, capTranscript, false)

	// Failed tool calls and user corrections near the incident.
	if g.Key.Session != "" {
		calls, err := e.db.SessionCalls(ctx, s, from, to, sessionToolCallsCap)
		if err != nil {
			return b, err
		}
		acts, err := e.db.SessionUserActs(ctx, s, from, to, sessionUserRowsCap)
		if err != nil {
			return b, err
		}
		classified := classifyCalls(calls, true, toActs(acts))
		b.NearbyToolFailures, b.NearbyToolFailuresTruncated = capRows(toolFailures(classified, o.maxBytes), capToolFailures, false)
		texts, _, err := userTexts(ctx, e.db, s, from, to)
		if err != nil {
			return b, err
		}
		var ids []int64
		for _, t := range texts {
			if t.corrects() {
				ids = append(ids, t.ID)
			}
		}
		corr, err := e.db.RowsByID(ctx, ids)
		if err != nil {
			return b, err
		}
		for i := range corr {
			corr[i].Signals = []string{cortex.SignalUserCorrection}
		}
		b.NearbyUserCorrections, b.NearbyUserCorrectionsTruncated = capRows(corr, capUserCorrections, false)
		if b.UserVoice, b.UserVoiceTruncated, err = e.userVoice(ctx, g, s, first, last); err != nil {
			return b, err
		}
		if b.UserWords, b.UserWordsTruncated, err = e.userWords(ctx, g, toActs(acts), classified); err != nil {
			return b, err
		}
	} else {
		b.NearbyToolFailures, b.NearbyUserCorrections, b.UserVoice = []cortex.ToolFailure{}, []cortex.EvidenceRow{}, []cortex.EvidenceRow{}
		b.UserWords = []cortex.EvidenceRow{}
	}

	// Non-AI logs of the same host.
	if b.NearbyLogs, err = e.db.NearbyLogs(ctx, g.Key.Host, from, to, false, capNearbyLogs+1); err != nil {
		return b, err
	}
	b.NearbyLogs, b.NearbyLogsTruncated = capRows(b.NearbyLogs, capNearbyLogs, false)
	if b.NearbyErrors, err = e.db.NearbyLogs(ctx, g.Key.Host, from, to, true, capNearbyErrors+1); err != nil {
		return b, err
	}
	b.NearbyErrors, b.NearbyErrorsTruncated = capRows(b.NearbyErrors, capNearbyErrors, false)

	if err := l.extras(ctx, e.db, g, &b); err != nil {
		return b, err
	}
	for _, rows := range [][]cortex.EvidenceRow{b.SignalAnchors, b.TranscriptBefore, b.TranscriptAfter,
		b.NearbyUserCorrections, b.UserVoice, b.UserWords, b.NearbyLogs, b.NearbyErrors} {
		boundRows(ptrs(rows), o.maxBytes)
	}
	b.Findings = findings.Derive(&b)
	return b, nil
}

// capUserVoice bounds a bundle's user voice rows.
const capUserVoice = 30

// reactionAfter bounds how long after an incident the user's next prompt
// is still their reaction to it (lenses that scope their groups set the
// reaction themselves).
const reactionAfter = 30 * time.Minute

// userVoice returns what the human did inside the group's span, and their
// reaction right after it, as evidence rows: the rows the lens scoped
// (skill runs, friction groups) or, for lenses grouped by time, the acts
// of the session within [first, last] and the next typed prompt after it.
func (e *Engine) userVoice(ctx context.Context, g *group, s store.SessionScope, first, last time.Time) ([]cortex.EvidenceRow, bool, error) {
	ids, reaction := g.Voice, g.Reaction
	if ids == nil && reaction == 0 {
		acts, err := e.db.SessionUserActs(ctx, s, first, last.Add(reactionAfter), sessionUserRowsCap)
		if err != nil {
			return nil, false, err
		}
		for _, a := range acts {
			if !a.Timestamp.After(last) {
				ids = append(ids, a.LogID)
				continue
			}
			if a.Kind == cortex.UserPrompt || a.Kind == cortex.UserCommand {
				reaction = a.LogID
				break
			}
		}
	}
	if reaction != 0 {
		ids = append(slices.Clone(ids), reaction)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	rows, err := e.db.RowsByID(ctx, ids)
	if err != nil {
		return nil, false, err
	}
	signals := map[int64][]string{}
	for _, a := range g.Anchors {
		signals[a.LogID] = a.Signals
	}
	for i := range rows {
		rows[i].Reaction = rows[i].ID == reaction
		rows[i].Signals = slices.Sorted(slices.Values(signals[rows[i].ID]))
	}
	out, truncated := capRows(rows, capUserVoice, true)
	return out, truncated, nil
}

// capUserWords bounds a bundle's decisive user words.
const capUserWords = 20

// userWords returns the user's decisive words of a group: the rows of its
// anchors that hold what the user typed (prompts, commands, refusal
// reasons), and after each interrupt or refusal among its anchors the
// words the user typed next — every typed act until the agent's next tool
// call, within reasonAfter — marked FollowsStop. acts and calls are the
// session's around the group, in time order.
func (e *Engine) userWords(ctx context.Context, g *group, acts []act, calls []tcall) ([]cortex.EvidenceRow, bool, error) {
	signals := map[int64][]string{}
	for _, a := range g.Anchors {
		signals[a.LogID] = a.Signals
	}
	var ids []int64
	follows := map[int64]bool{}
	for i, a := range acts {
		if _, anchored := signals[a.LogID]; !anchored {
			continue
		}
		if a.Text != "" && (a.typed() || a.Kind == cortex.UserRejection) {
			ids = append(ids, a.LogID)
		}
		if a.Kind != cortex.UserInterrupt && a.Kind != cortex.UserRejection {
			continue
		}
		for _, r := range reasonsAfter(acts, i, calls) {
			ids = append(ids, acts[r].LogID)
			follows[acts[r].LogID] = true
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	rows, err := e.db.RowsByID(ctx, ids)
	if err != nil {
		return nil, false, err
	}
	for i := range rows {
		rows[i].Signals = slices.Sorted(slices.Values(signals[rows[i].ID]))
		rows[i].FollowsStop = follows[rows[i].ID]
		rows[i].Reaction = rows[i].ID == g.Reaction
	}
	out, truncated := capRows(rows, capUserWords, false)
	return out, truncated, nil
}

// reasonsAfter returns the indexes of the typed acts that follow the stop
// acts[i] (an interrupt or a refusal) in its thread before the agent's
// next tool call, within reasonAfter of it: the user saying why.
func reasonsAfter(acts []act, i int, calls []tcall) []int {
	stop := acts[i]
	var out []int
	for j := i + 1; j < len(acts); j++ {
		a := acts[j]
		if a.Thread != stop.Thread {
			continue
		}
		if a.At.Sub(stop.At) > reasonAfter {
			break
		}
		if a.Kind == cortex.UserInterrupt || a.Kind == cortex.UserRejection {
			break // the next stop has reasons of its own
		}
		if !a.typed() || a.Text == "" {
			continue
		}
		from := stop.At
		if len(out) > 0 {
			from = acts[out[len(out)-1]].At
		}
		if len(out) > 0 && slices.ContainsFunc(calls, func(c tcall) bool {
			return c.Thread == stop.Thread && c.Timestamp.After(from) && c.Timestamp.Before(a.At)
		}) {
			break // the agent acted on the first words: later ones are a new turn
		}
		out = append(out, j)
	}
	return out
}

// toolFailures returns the failed calls (an error status or a failure
// shown in the output) with their class, command and recovery; an error
// status the classifier read as success (a ^C written to a process the
// agent meant to stop) is not one.
func toolFailures(calls []tcall, maxBytes int) []cortex.ToolFailure {
	var out []cortex.ToolFailure
	for _, c := range calls {
		if !c.IsError && c.Class != classFailedInOutput || c.Class == classOK {
			continue
		}
		out = append(out, toolFailure(c, maxBytes))
	}
	return out
}

// toolFailure is a classified call as bundles show it.
func toolFailure(c tcall, maxBytes int) cortex.ToolFailure {
	f := cortex.ToolFailure{EventID: c.ID, CallLogID: c.CallLogID, ResultLogID: c.ResultLogID,
		Timestamp: cortex.FormatTime(c.Timestamp), ToolName: c.ToolName, MCPServer: c.MCPServer,
		Status: c.Status, ExitCode: c.ExitCode, Recovered: c.Recovered, Class: c.Class, Line: c.Why}
	text := c.ErrorText
	if text == "" {
		text = c.Output
	}
	text = cortex.UnwrapContent(text)
	f.ErrorText, _ = cutText(text, maxBytes)
	f.Line = cortex.UnwrapContent(f.Line)
	f.Operation = c.ToolName
	if shellTool(c.ToolName) {
		f.Command = cortex.CutUTF8(command(c.Arguments), 512)
		if op := safeOperation(c.Op, c.ToolName); op != "" {
			f.Operation = op
		}
	}
	return f
}

// safeWord is a token safe to name in a hint: a program or subcommand.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,39}$`)

// safeOperation renders a shell call's operation ("Bash git push") as
// "git push" when its words are plain program and subcommand names.
func safeOperation(op, tool string) string {
	words := strings.Fields(strings.TrimPrefix(op, tool+" "))
	var out []string
	for _, w := range words {
		if !safeWord.MatchString(w) {
			break
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}
