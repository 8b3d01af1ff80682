package syslogd

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/teststore"
)

// TestSyslogInNearbyErrors indexes a labelled skill incident (host
// "testhost"), sends syslog messages through a real receiver, and checks
// the incident's evidence: an error of the same host inside the
// correlation window is a nearby error, an info message a nearby log, and
// neither an error of another host nor one outside the window appears.
func TestSyslogInNearbyErrors(t *testing.T) {
	root := testcorpus.Labelled(t)
	db, _ := teststore.Indexed(t, filepath.Join(root, "claude", "skill-tool-failures"))
	ctx := context.Background()
	lens, err := incident.LensByName(cortex.LensSkill)
	if err != nil {
		t.Fatal(err)
	}
	params := cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Skill: "ops:deploy-helper"}, CorrelationWindowMinutes: 5}
	inv, err := incident.New(db).Investigate(ctx, lens, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Bundles) != 1 {
		t.Fatalf("want 1 bundle, got %d (total %d)", len(inv.Bundles), inv.Total)
	}
	inc := inv.Bundles[0].Incident
	if len(inv.Bundles[0].NearbyErrors) != 0 {
		t.Fatalf("nearby errors before any syslog: %+v", inv.Bundles[0].NearbyErrors)
	}
	first, err := cortex.ParseTimestamp(inc.FirstSeen)
	if err != nil {
		t.Fatal(err)
	}
	host := inc.Hostname
	at := func(d time.Duration) string { return first.Add(d).UTC().Format(time.RFC3339Nano) }

	r := start(t, db, Options{Hostname: host})
	msgs := []string{
		fmt.Sprintf("<11>1 %s %s deployd 42 - - inside: deploy helper failed to reach the registry", at(time.Minute), host),
		fmt.Sprintf("<14>1 %s %s deployd 42 - - inside info: deploy started", at(30*time.Second), host),
		fmt.Sprintf("<11>1 %s otherhost deployd 42 - - other host: deploy failed", at(time.Minute)),
		fmt.Sprintf("<11>1 %s %s deployd 42 - - outside: failed hours before", at(-3*time.Hour), host),
	}
	sendUDP(t, r.udp, msgs[:2]...)
	sendTCP(t, r.tcp, octet(msgs[2])+octet(msgs[3]))
	waitFor(t, 5*time.Second, "4 stored", func() bool { return r.srv.Stats().Total().Stored == 4 })
	r.stop()

	inv, err = incident.New(db).Investigate(ctx, lens, params)
	if err != nil {
		t.Fatal(err)
	}
	b := inv.Bundles[0]
	messages := func(rows []cortex.EvidenceRow) []string {
		var out []string
		for _, r := range rows {
			if r.Tool != "" || r.Hostname != host {
				t.Errorf("nearby row of an agent or another host: %+v", r)
			}
			out = append(out, r.Message)
		}
		return out
	}
	errs := messages(b.NearbyErrors)
	if len(errs) != 1 || errs[0] != "inside: deploy helper failed to reach the registry" {
		t.Errorf("nearby_errors = %q", errs)
	}
	if len(b.NearbyErrors) == 1 && (b.NearbyErrors[0].Severity != cortex.SevError || b.NearbyErrors[0].AppName != "deployd") {
		t.Errorf("nearby error row %+v", b.NearbyErrors[0])
	}
	logs := messages(b.NearbyLogs)
	if len(logs) != 2 || logs[0] != "inside info: deploy started" || logs[1] != errs[0] {
		t.Errorf("nearby_logs = %q", logs)
	}
}
