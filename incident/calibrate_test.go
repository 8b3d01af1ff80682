package incident

import (
	"context"
	"math"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
)

// A session's ending, from its last acts (newest first). Texts are what
// users typed in ../shared/corpus/real (claude d43002f0…, 1284c080…,
// codex 019ec66b…) and plain working prompts.
func TestBadEnd(t *testing.T) {
	act := func(kind, text string) sqlite.UserAct { return sqlite.UserAct{Kind: kind, Text: text} }
	for _, tc := range []struct {
		name string
		last []sqlite.UserAct
		want bool
	}{
		{"interrupt among the last three", []sqlite.UserAct{act(cortex.UserPrompt, "okay lets update the readme"),
			act(cortex.UserInterrupt, "[Request interrupted by user]"), act(cortex.UserPrompt, "run the tests")}, true},
		{"refused call", []sqlite.UserAct{act(cortex.UserRejection, "")}, true},
		{"stop", []sqlite.UserAct{act(cortex.UserPrompt, "are you trying to test it visually in chrome? you can stop. unnecessary")}, true},
		{"revert", []sqlite.UserAct{act(cortex.UserPrompt, "thanks"), act(cortex.UserPrompt, "uh i think revert any changes you have")}, true},
		{"left after a correction", []sqlite.UserAct{act(cortex.UserPrompt, "i didnt ask you to rewrite it")}, true},
		{"a correction followed by work", []sqlite.UserAct{act(cortex.UserPrompt, "great, now commit"),
			act(cortex.UserPrompt, "i didnt ask you to rewrite it")}, false},
		{"plain work", []sqlite.UserAct{act(cortex.UserPrompt, "okay, now /github-pr-review"),
			act(cortex.UserCommand, "/review"), act(cortex.UserPrompt, "fix the flaky test")}, false},
		{"a standing instruction is no bad end", []sqlite.UserAct{act(cortex.UserPrompt, "do not commit anything")}, false},
	} {
		if got := badEnd(tc.last); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}

// The figures and verdicts of one signal, by hand: 10 judged sessions,
// 4 carry the signal (3 bad), 6 do not (1 bad).
func TestSignalStat(t *testing.T) {
	judged, bad := map[sessionKey][]sqlite.UserAct{}, map[sessionKey]bool{}
	carriers := map[sessionKey]bool{}
	for i := range 10 {
		k := sessionKey{cortex.ToolClaude, "h", string(rune('a' + i))}
		judged[k] = []sqlite.UserAct{{}}
		if i < 4 {
			carriers[k] = true
		}
		if i < 3 || i == 9 {
			bad[k] = true
		}
	}
	carriers[sessionKey{cortex.ToolClaude, "h", "no-acts"}] = true // carries it, not judged
	s := stat("skill", "x", carriers, judged, bad)
	want := (3.5 / 5) / (1.5 / 7)
	if s.Sessions != 5 || s.Judged != 4 || s.BadEnd != 3 || s.Rate != 0.75 || math.Abs(s.RateWithout-1.0/6) > 1e-9 ||
		math.Abs(s.Lift-want) > 1e-9 || s.Verdict != VerdictTooFew {
		t.Fatalf("got %+v (lift want %.4f)", s, want)
	}
	// With enough sessions the same rates separate; equal rates do not;
	// reversed ones are inverse; none fired is said so.
	for i := 10; i < 14; i++ {
		k := sessionKey{cortex.ToolClaude, "h", string(rune('a' + i))}
		judged[k], carriers[k] = []sqlite.UserAct{{}}, true
	}
	if s := stat("skill", "x", carriers, judged, bad); s.Judged != 8 || s.BadEnd != 3 || s.Verdict != VerdictSeparates {
		t.Errorf("got %+v", s)
	}
	for k := range carriers {
		delete(bad, k)
	}
	if s := stat("skill", "x", carriers, judged, bad); s.Verdict != VerdictInverse {
		t.Errorf("inverse: %+v", s)
	}
	if s := stat("skill", "x", nil, judged, bad); s.Verdict != VerdictNeverFired || s.Sessions != 0 {
		t.Errorf("never fired: %+v", s)
	}
}

// On the labelled corpus every expected signal is found and none fires
// where no incident is expected; the figures add up.
func TestCalibrateLabelled(t *testing.T) {
	ctx := context.Background()
	root := testcorpus.Labelled(t)
	db := indexed(t, root)
	e := New(db)
	cal, err := e.Calibrate(ctx, cortex.CalibrationParams{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := ReadLabelled(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CompareLabelled(ctx, root, cases, &cal); err != nil {
		t.Fatal(err)
	}
	if cal.Labelled == nil || cal.Labelled.Passed != cal.Labelled.Cases || cal.Labelled.Cases != len(cases) {
		t.Fatalf("labelled: %+v", cal.Labelled)
	}
	n := 0
	for _, l := range Lenses() {
		n += len(l.signals())
	}
	if len(cal.Signals) != n || cal.Sessions == 0 || cal.BadEndSessions > cal.Sessions {
		t.Fatalf("calibration: %d signals of %d, %+v", len(cal.Signals), n, cal)
	}
	expected := 0
	for _, s := range cal.Signals {
		h := s.Labelled
		if h == nil || h.Missed != 0 || h.FalsePositives != 0 || h.Found != h.Expected {
			t.Errorf("%s/%s: %+v", s.Lens, s.Signal, h)
		}
		if h != nil {
			expected += h.Expected
		}
		if s.Judged > s.Sessions || s.BadEnd > s.Judged || (s.Sessions == 0) != (s.Verdict == VerdictNeverFired) {
			t.Errorf("%s/%s: %+v", s.Lens, s.Signal, s)
		}
	}
	if expected < 10 {
		t.Errorf("only %d expected signal hits compared", expected)
	}
	// Bad input: no expected.json.
	if _, err := ReadLabelled(t.TempDir()); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("missing expected.json: %v", err)
	}
}

// On the real corpus: the sessions are judged and the signals of the
// subject lenses that fire get figures.
func TestCalibrateReal(t *testing.T) {
	db := indexed(t, testcorpus.Real(t))
	cal, err := New(db).Calibrate(context.Background(), cortex.CalibrationParams{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Sessions < 30 || cal.BadEndSessions == 0 || cal.BadEndSessions == cal.Sessions {
		t.Fatalf("sessions %d, bad %d", cal.Sessions, cal.BadEndSessions)
	}
	fired := map[string]bool{}
	for _, s := range cal.Signals {
		if s.Sessions > 0 {
			fired[s.Lens+"/"+s.Signal] = true
		}
	}
	for _, want := range []string{"skill/tool_failure_after_skill", "friction/user_rejection", "mcp/repeated_call_failure", "hook/hook_failed"} {
		if !fired[want] {
			t.Errorf("%s never fired on the real corpus", want)
		}
	}
}
