package gen

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestScanShapes(t *testing.T) {
	src := `{"a":"2026-06-09T20:33:44.973Z","b":"2025-11-17T15:30:28Z","c":"2026-01-01T00:00:00.1234567+02:00",` +
		`"d":"2026-01-01T00:00:00-07:00","e":"2026-01-01T00:00:00","f":"2026-13-01T00:00:00Z",` +
		`"u":"fe869ecb-c176-478f-9734-7e4b8ef12cff","U":"FE869ECB-C176-478F-9734-7E4B8EF12CFF",` +
		`"x":"fe869ecb-c176-478f-9734-7e4b8ef12cf","id":"toolu_01ABCdefGHIjklMNOpqrSTUv","n":"call_id","m":"msg_count",` +
		`"h":"msg_0f8d38d40f365c98016a3d27487e988191af2c6fe1007deb66","p":"xtoolu_01ABCdefGHIjklMNOpqrSTUv"}`
	ps := scan([]byte(src))
	var got []string
	for _, p := range ps {
		got = append(got, src[p.off:int(p.off)+p.size()])
	}
	want := []string{
		"2026-06-09T20:33:44", "2025-11-17T15:30:28", "2026-01-01T00:00:00", "2026-01-01T00:00:00",
		"fe869ecb-c176-478f-9734-7e4b8ef12cff", "FE869ECB-C176-478F-9734-7E4B8EF12CFF",
		"qrSTUv", "7deb66",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("patches:\n got %q\nwant %q", got, want)
	}
	if ps[3].zone != -7*3600 || ps[2].zone != 2*3600 {
		t.Errorf("zones = %d, %d", ps[2].zone, ps[3].zone)
	}
	if ps[5].flags&flagUpper == 0 || ps[4].flags&flagUpper != 0 {
		t.Error("upper-case flag not tracked")
	}
}

func TestRewriteKeepsLengthAndFormat(t *testing.T) {
	src := []byte("{\"timestamp\":\"2024-02-28T23:59:59.5+05:30\",\"id\":\"FE869ECB-C176-478F-9734-7E4B8EF12CFF\"}\n" +
		"{\"x\":\"fe869ecb-c176-478f-9734-7e4b8ef12cff\"}{\"y\":1}")
	ps := scan(src)
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	if err := writePatched(w, src, ps, copyParams{seed: 7, k: 3, delta: 86400 + 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if len(got) != len(src) {
		t.Fatalf("length changed: %d -> %d", len(src), len(got))
	}
	if !strings.HasPrefix(got, `{"timestamp":"2024-03-01T00:00:00.5+05:30"`) {
		t.Errorf("timestamp not shifted across the leap day: %s", got)
	}
	upper := got[strings.Index(got, `"id":"`)+6:][:36]
	lower := got[strings.Index(got, `"x":"`)+5:][:36]
	if strings.ToLower(upper) != lower || upper == strings.ToLower(upper) {
		t.Errorf("same uuid must map to the same value and keep its case: %s vs %s", upper, lower)
	}
	if lower[14] != '4' || !strings.ContainsRune("89ab", rune(lower[19])) {
		t.Errorf("replacement %s is not v4-shaped", lower)
	}
	if !strings.HasSuffix(got, `"}{"y":1}`) {
		t.Errorf("joined records changed: %s", got)
	}
}

func TestWallFormattingMatchesTime(t *testing.T) {
	base := time.Date(1999, 12, 31, 23, 0, 0, 0, time.UTC).Unix()
	for i := int64(0); i < 20000; i++ {
		wall := base + i*7919*13
		want := time.Unix(wall, 0).UTC().Format("2006-01-02T15:04:05")
		if got := string(appendWall(nil, wall, nil)); got != want {
			t.Fatalf("appendWall(%d) = %s, want %s", wall, got, want)
		}
		y, m, d := civilFromDays(wall / 86400)
		if daysFromCivil(y, m, d) != wall/86400 {
			t.Fatalf("civil round trip failed for %d", wall)
		}
	}
}

func TestV7StaysV7(t *testing.T) {
	hi, lo, _, ok := parseUUID([]byte("019a93b9-f380-7600-98ff-940e6b99603c"), 0)
	if !ok {
		t.Fatal("parse failed")
	}
	s := uuidString(mapUUID(1, 0, hi, lo))
	if s[14] != '7' {
		t.Errorf("v7 uuid mapped to %s", s)
	}
}

func TestAgentIDsAreBounded(t *testing.T) {
	src := []byte(`{"agentId":"a2271d1","x":"ba2271d1","y":"a2271d1f","z":"agent-a2271d1.jsonl"}`)
	ps := findAgentIDs(src, "a2271d1", nil)
	if len(ps) != 2 {
		t.Fatalf("found %d agent ids, want 2", len(ps))
	}
}
