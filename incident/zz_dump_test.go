package incident

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/store"
)

// CORTEX_DUMP_DB=... CORTEX_DUMP_SESSION=... go test -run TestZZDump ./incident -v
func TestZZDump(t *testing.T) {
	path, sess := os.Getenv("CORTEX_DUMP_DB"), os.Getenv("CORTEX_DUMP_SESSION")
	if path == "" {
		t.Skip()
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tool := cortex.Tool(os.Getenv("CORTEX_DUMP_TOOL"))
	if tool == "" {
		tool = cortex.ToolClaude
	}
	sc := store.SessionScope{Tool: tool, Session: sess, Host: "vm"}
	vr := newVoiceReader(db)
	svs, err := vr.sessions(ctx, []store.SessionScope{sc})
	if err != nil {
		t.Fatal(err)
	}
	sv := svs[0]
	cl, _ := vr.claimsMany(ctx, []store.CallWindow{{Scope: sc}})
	calls, _ := vr.callsMany(ctx, []callRead{{sv: sv}})
	d := &dialogue{claims: cl[0], calls: calls[0]}
	hits := frictionSignalsOf(sv.acts, calls[0], markReasks(sv.acts), d)
	hm := map[int][]string{}
	for _, h := range hits {
		hm[h.index] = h.signals
	}
	for i, a := range sv.acts {
		v := d.around(sv.acts, i)
		txt := a.Text
		if len(txt) > 160 {
			txt = txt[:160]
		}
		fmt.Printf("%3d %s %-10s th=%q %+v %v %v | %q\n", i, a.At.Format("15:04:05"), a.Kind, a.Thread, v, a.Reading.Categories, hm[i], txt)
	}
	if os.Getenv("CORTEX_DUMP_CALLS") != "" {
		loopTexts(ctx, db, calls[0])
		for _, c := range calls[0] {
			fmt.Printf("  call %s th=%q %-16s %-18s op=%q why=%.80q\n", c.Timestamp.Format("15:04:05"), c.Thread, c.ToolName, c.Class, c.Op, c.Why)
		}
		for _, l := range retryLoops(calls[0]) {
			fmt.Printf("  LOOP %q %d calls from %s\n", l.Op, len(l.Calls), l.Calls[0].Timestamp.Format("15:04:05"))
		}
	}
	for _, r := range sv.runs {
		fmt.Printf("run %s %s %s..%s\n", r.Name, r.Kind, r.Start.Format("15:04:05"), r.End.Format("15:04:05"))
	}
}
