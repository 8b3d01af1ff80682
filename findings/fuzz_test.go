package findings

import (
	"testing"

	"github.com/cortexhq/cortex"
)

// FuzzDerive feeds random row texts, roles, ids and tool-failure text to
// both rule sets: Derive must not panic, must be deterministic, and every
// non-unknown finding must cite evidence with sorted, distinct ids (see
// checkInvariants).
func FuzzDerive(f *testing.F) {
	f.Add("That's not what I asked. You stopped at the plan again.", "permission denied", "wrong repo", uint8(0), uint8(3), "sudo: a password is required", uint16(7), true)
	f.Add("--- FAIL: TestTotal", "This is fucking broken and the test still fails", "exit code 1", uint8(3), uint8(0), "context deadline exceeded", uint16(0), false)
	f.Add("not foundation 4010 14035", "", "exit code 0", uint8(5), uint8(8), "", uint16(0xffff), true)
	f.Add("’wrong repo’", "we wasted\n\ttime", "\xff\xfe exit status -1", uint8(1), uint8(2), "http 401", uint16(3), false)
	roles := append(cortex.Roles(), "", "bogus")
	f.Fuzz(func(t *testing.T, a, b, c string, roleA, roleB uint8, failText string, bits uint16, skill bool) {
		mk := func(id int64, role uint8, text string) cortex.EvidenceRow {
			r := row(id, roles[int(role)%len(roles)], text)
			if role%3 == 0 {
				r.Tool = "" // sometimes a non-AI row
			}
			return r
		}
		ra, rb := mk(int64(bits&7), roleA, a), mk(int64(bits>>3&7), roleB, b)
		rc := mk(int64(bits>>6&7), roleA^roleB, c)
		bu := &cortex.Bundle{
			Incident: cortex.Incident{Lens: cortex.LensAbuse, SkillName: c, SkillPlugin: b,
				EventCount: int(bits >> 9 & 7), AnchorLogIDs: []int64{ra.ID, 99}},
			SignalAnchors:            []cortex.EvidenceRow{ra},
			TranscriptBefore:         []cortex.EvidenceRow{rb, rc},
			TranscriptAfter:          []cortex.EvidenceRow{rc, ra},
			NearbyUserCorrections:    []cortex.EvidenceRow{rb},
			NearbyLogs:               []cortex.EvidenceRow{logRow(int64(bits>>12), c)},
			SkillEvents:              []cortex.SkillEventRow{{LogID: ra.ID}, {LogID: rb.ID}},
			TranscriptAfterTruncated: bits&1 == 1,
		}
		if bits&2 == 2 {
			bu.NearbyErrors = []cortex.EvidenceRow{logRow(1, a), logRow(2, b), logRow(1, c)}
		}
		if bits&4 == 4 {
			bu.Incident.SignalsPresent = []string{cortex.SignalOverlongLoop}
		}
		var logID *int64
		if bits&8 == 8 {
			logID = ptr(rb.ID)
		}
		bu.NearbyToolFailures = []cortex.ToolFailure{
			{EventID: int64(bits % 5), ResultLogID: logID, ErrorText: failText},
			{EventID: int64(bits % 3), CallLogID: ptr(int64(bits)), ErrorText: a},
		}
		rs := Abuse()
		if skill {
			rs, bu.Incident.Lens = Skill(), cortex.LensSkill
		}
		checkInvariants(t, rs, bu, rs.Derive(bu))
		checkInvariants(t, rs, bu, Derive(bu))
		var nilRules *Rules
		checkInvariants(t, nilRules, bu, nilRules.Derive(bu))
	})
}
