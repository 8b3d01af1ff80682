package detection

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

func ptrBool(b bool) *bool  { return &b }
func ptrInt(n int64) *int64 { return &n }

// Score matches by session, lens and subject, on a line or the span, and
// counts what the summary shows.
func TestScore(t *testing.T) {
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	labels := []Label{
		{Corpus: "c", File: "r1/a.jsonl", Reviewed: true},
		{Corpus: "c", File: "r1/a.jsonl", Session: "s1", Lens: "friction", Expected: ptrBool(true), Lines: []int64{10}, DecisiveLine: ptrInt(10)},
		{Corpus: "c", File: "r1/a.jsonl", Session: "s1", Lens: "friction", Expected: ptrBool(true), Lines: []int64{50}, DecisiveLine: ptrInt(50)},
		{Corpus: "c", File: "r1/a.jsonl", Session: "s1", Lens: "skill", Subject: "search", Expected: ptrBool(true), Lines: []int64{20}},
		{Corpus: "c", File: "r1/a.jsonl", Session: "s1", Lens: "friction", Expected: ptrBool(false), Lines: []int64{70}},
		{Corpus: "c", File: "r2/b.jsonl", Session: "s2", Lens: "friction", Expected: ptrBool(true), Lines: []int64{5}}, // not reviewed
	}
	c := Corpora{
		Times:     map[string]map[int64]time.Time{fileKey("c", "r1/a.jsonl"): {10: at(10), 20: at(20), 50: at(50), 70: at(70)}},
		SessionOf: map[string]string{fileKey("c", "r1/a.jsonl"): "s1", fileKey("c", "r2/b.jsonl"): "s2"},
		Sessions:  map[string][]string{fileKey("c", "r1/a.jsonl"): {"s1"}, fileKey("c", "r2/b.jsonl"): {"s2"}},
	}
	obs := []Observed{
		// A friction incident on line 10 showing it: true, decisive shown.
		{Corpus: "c", Session: "s1", File: "r1/a.jsonl", Lens: "friction", ID: "f1", First: at(9), Last: at(11),
			Locs: []Loc{{"r1/a.jsonl", 10}}, Shown: []Loc{{"r1/a.jsonl", 10}}},
		// The skill incident names the skill with its plugin: true.
		{Corpus: "c", Session: "s1", File: "r1/a.jsonl", Lens: "skill", Subject: "entire:search", ID: "s1", First: at(15), Last: at(25)},
		// An incident on the negative moment: false.
		{Corpus: "c", Session: "s1", File: "r1/a.jsonl", Lens: "friction", ID: "f2", First: at(69), Last: at(71),
			Locs: []Loc{{"r1/a.jsonl", 70}}},
		// An incident in an unreviewed session: not scored.
		{Corpus: "c", Session: "s2", File: "r2/b.jsonl", Lens: "friction", ID: "f3", First: at(1), Last: at(6)},
	}
	rep := Score(labels, obs, c)
	if len(rep.Corpora) != 1 {
		t.Fatalf("corpora %+v", rep.Corpora)
	}
	all := rep.Corpora[0].All
	if all.Incidents != 3 || all.True != 2 || all.Positives != 3 || all.Found != 2 || all.Decisive != 1 || all.Shown != 1 {
		t.Fatalf("counts %+v", all)
	}
	if rep.Unscored != 1 || len(rep.False) != 1 || rep.False[0].Negative == nil || len(rep.Misses) != 1 || rep.Misses[0].Label.Lines[0] != 50 {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Unreviewed) != 1 || !strings.Contains(rep.Unreviewed[0], "r2/b.jsonl") {
		t.Fatalf("unreviewed %v", rep.Unreviewed)
	}
	if f := rep.Corpora[0].Lenses["friction"]; f.Precision() != 0.5 || f.Recall() != 0.5 {
		t.Fatalf("friction %+v", f)
	}
}

func TestReadLabelsErrors(t *testing.T) {
	for _, bad := range []string{
		`{"file": "a"}`,
		`{"corpus": "c", "file": "a", "lens": "friction", "lines": [1]}`,
		`{"corpus": "c", "file": "a", "expected": true, "lens": "nope", "lines": [1]}`,
		`{"corpus": "c", "file": "a", "expected": true, "lens": "skill"}`,
		`{"corpus": "c", "file": "a", "reviewed": true, "colour": "red"}`,
		`not json`,
	} {
		if _, err := ReadLabels(strings.NewReader(bad), "x.jsonl"); err == nil || !strings.Contains(err.Error(), "x.jsonl:1") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	ls, err := ReadLabels(strings.NewReader("# a comment\n\n"+`{"corpus": "c", "file": "a", "reviewed": true}`+"\n"), "ok.jsonl")
	if err != nil || len(ls) != 1 || !ls[0].Reviewed {
		t.Fatalf("%v %v", ls, err)
	}
}

// labelsFile reads a labels file of testdata/corpus.
func labelsFile(t *testing.T, name string) []Label {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ls, err := ReadLabels(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// The figures on ../shared/corpus/real, read against labels made by
// reading its sessions (testdata/corpus/labels-real.jsonl): a gate that
// fails when detection gets worse than measured when it last changed.
func TestDetectionOnRealCorpus(t *testing.T) {
	root := testcorpus.Real(t)
	res, err := Run(context.Background(), Options{Corpora: []Corpus{{Name: "real", Root: root}}, Labels: labelsFile(t, "labels-real.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Corpora) != 1 {
		t.Fatalf("corpora %+v", res.Corpora)
	}
	all := res.Corpora[0].All
	t.Logf("real corpus: precision %.2f (%d/%d), recall %.2f (%d/%d), decisive shown %d/%d", all.Precision(), all.True,
		all.Incidents, all.Recall(), all.Found, all.Positives, all.Shown, all.Decisive)
	if all.Precision() < 0.78 || all.Recall() < 0.80 || all.DecisiveRatio() < 0.8 || len(res.Unreviewed) > 0 {
		t.Errorf("real corpus: precision %.2f, recall %.2f, decisive %.2f (unreviewed %v)", all.Precision(), all.Recall(),
			all.DecisiveRatio(), res.Unreviewed)
	}
}

// The collected corpus (testdata/corpus/collected: sources and labels; the
// transcripts are fetched, not committed), when CORTEX_COLLECTED_CORPUS
// names a folder that holds it.
func TestDetectionOnCollectedCorpus(t *testing.T) {
	root := os.Getenv("CORTEX_COLLECTED_CORPUS")
	if root == "" {
		t.Skip("CORTEX_COLLECTED_CORPUS is not set: the collected corpus is not in this repository (testdata/corpus/collected/SOURCES.md)")
	}
	res, err := Run(context.Background(), Options{Corpora: []Corpus{{Name: "collected", Root: root}},
		Labels: labelsFile(t, filepath.Join("collected", "labels.jsonl"))})
	if err != nil {
		t.Fatal(err)
	}
	all := res.Corpora[0].All
	t.Logf("collected corpus: precision %.2f (%d/%d), recall %.2f (%d/%d), decisive shown %d/%d", all.Precision(), all.True,
		all.Incidents, all.Recall(), all.Found, all.Positives, all.Shown, all.Decisive)
	if all.Precision() < 0.75 || all.Recall() < 0.60 {
		t.Errorf("collected corpus: precision %.2f, recall %.2f", all.Precision(), all.Recall())
	}
}
