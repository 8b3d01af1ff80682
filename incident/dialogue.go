package incident

import (
	"context"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/store"
)

// The dialogue around a user's act: what the agent said last before it
// (did it hand the turn back with a question? say the work was done?) and
// how it answered (did it concede a mistake, or undo its work?). A typed
// message is read in this context: "no" after "Should I also …?" is an
// answer; "no, …" after the agent's work is a correction; a report that
// the page is blank after "Done." is one too; anything the agent concedes
// was a correction, in whatever language the user wrote.

// Bounds of the dialogue reads.
const (
	// replyWindow bounds the agent's reply to an act: its words and calls
	// within this long after the act (and before the user's next typed
	// act) are the reply.
	replyWindow = 10 * time.Minute
	// replyCalls is how many of the reply's first tool calls may come
	// before the agent's concession (it often looks before it says so).
	replyCalls = 3
	// sessionClaimsCap bounds the claim rows read per window.
	sessionClaimsCap = 2_000
)

// turnView is the dialogue around one act.
type turnView struct {
	// Asked: the agent's last words before the act ended with a question
	// (after its last tool call of the turn).
	Asked bool
	// Done: the agent's last words before the act said the work was done.
	Done bool
	// Worked: the agent's turn before the act made calls that succeeded
	// (it did something the user can be reacting to).
	Worked bool
	// Admitted: the agent's reply conceded a mistake ("you're right", "my
	// mistake", "抱歉") or its reasoning read the message as pushback
	// ("the user is pointing out …"); Reverted: its first calls undid work
	// (git checkout/restore/revert/reset, a stash).
	Admitted bool
	Reverted bool
	// Agreed: the reply granted the user a point ("good catch", "fair
	// point"): it confirms a challenge, not words that say nothing.
	Agreed bool
}

// dialogue is the agent's side of a span of a session: its claim rows
// (package claim's dialogue kinds) and its tool calls, in time order.
type dialogue struct {
	claims []store.ClaimRow
	calls  []tcall
}

// around returns the dialogue around acts[i] (a typed act or a refusal),
// in the act's agent thread.
func (d *dialogue) around(acts []act, i int) turnView {
	var v turnView
	if d == nil {
		return v
	}
	a := acts[i]
	start := turnStart(acts, i)
	end := a.At.Add(replyWindow)
	for j := i + 1; j < len(acts); j++ {
		if acts[j].typed() && acts[j].Thread == a.Thread {
			end = minTime(end, acts[j].At)
			break
		}
	}
	// The agent's last words of the turn, after its last call.
	var lastCall time.Time
	for _, c := range d.calls {
		if c.Thread == a.Thread && c.Timestamp.After(start) && c.Timestamp.Before(a.At) {
			lastCall = c.Timestamp
			if c.Class == classOK && !loadsSkill(c) {
				v.Worked = true
			}
		}
	}
	var last *store.ClaimRow
	for k := range d.claims {
		c := &d.claims[k]
		if c.Thread == a.Thread && c.Timestamp.After(start) && c.Timestamp.Before(a.At) && claim.Kinds(c.Kinds)&(claim.Asks|claim.Completion) != 0 {
			last = c
		}
	}
	if last != nil && !last.Timestamp.Before(lastCall) {
		v.Asked = claim.Kinds(last.Kinds).Has(claim.Asks)
		v.Done = claim.Kinds(last.Kinds).Has(claim.Completion)
	}
	// The reply: the concession before its first few calls.
	var before time.Time // the replyCalls-th call of the reply
	n := 0
	for _, c := range d.calls {
		if c.Thread != a.Thread || !c.Timestamp.After(a.At) || !c.Timestamp.Before(end) {
			continue
		}
		if n < replyCalls && revertOp(c.Op) {
			v.Reverted = true
		}
		n++
		if n == replyCalls {
			before = c.Timestamp
			break
		}
	}
	if before.IsZero() {
		before = end
	}
	for _, c := range d.claims {
		if c.Thread != a.Thread || !c.Timestamp.After(a.At) || !c.Timestamp.Before(before) {
			continue
		}
		k := claim.Kinds(c.Kinds)
		v.Admitted = v.Admitted || k.Has(claim.Admission) || k.Has(claim.Noted)
		v.Agreed = v.Agreed || k.Has(claim.Agreement)
	}
	return v
}

// revertOp reports whether an operation undoes work: git checkout, restore,
// revert, reset or stash (package toolcall names a shell call's operation
// "Bash git checkout").
func revertOp(op string) bool {
	f := strings.Fields(op)
	if len(f) < 3 || f[1] != "git" {
		return false
	}
	switch f[2] {
	case "checkout", "restore", "revert", "reset", "stash":
		return true
	}
	return false
}

// claimsMany reads the dialogue claims of many windows: from the stored
// readings when every assistant row's is of this binary's rules, else
// from the assistant rows' texts, read now (a store not yet refreshed).
func (v *voiceReader) claimsMany(ctx context.Context, ws []store.CallWindow) ([][]store.ClaimRow, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	if v.claimsCurrent == nil {
		current, err := v.db.ClaimsCurrent(ctx, claim.Version)
		if err != nil {
			return nil, err
		}
		v.claimsCurrent = &current
	}
	if *v.claimsCurrent {
		return v.db.SessionClaimsMany(ctx, ws, sessionClaimsCap)
	}
	out := make([][]store.ClaimRow, len(ws))
	for i, w := range ws {
		from, to := w.From, w.To
		if to.IsZero() {
			to = time.Now().Add(24 * time.Hour * 365 * 100)
		}
		rows, err := v.db.SessionAssistantRows(ctx, w.Scope, from, to, sessionClaimsCap) // prose only: the fallback of a store not yet read again
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			k := claim.Of(string(r.Role), r.Message) & claim.Dialogue
			if k == 0 {
				continue
			}
			at, _ := cortex.ParseTimestamp(r.Timestamp)
			out[i] = append(out[i], store.ClaimRow{LogID: r.ID, Timestamp: at, Kinds: int(k), Thread: rowThread(r)})
		}
	}
	return out, nil
}

// rowThread is the agent thread of an evidence row, as far as the row
// says (the main thread: evidence rows carry no agent id).
func rowThread(cortex.EvidenceRow) string { return "" }
