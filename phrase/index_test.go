package phrase

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

// FindNormalized reads a text once through an index of the phrases' first
// 3 bytes; findEach searches for each phrase in turn. They must agree.

// testSets are sets like the ones in use (claim's phrases, swear words)
// and ones that stress the index: shared first bytes, phrases inside
// phrases, punctuation at the edges.
func testSets() []*Set {
	return []*Set{
		NewSet("is unavailable", "is not available", "isn't available", "doesn't exist", "does not exist",
			"don't have access to", "no access to", "is not connected", "cannot access", "can't access",
			"returned an error", "returned error", "errored", "errored out", "timed out", "call failed",
			"is failing", "keeps failing", "did not work", "didn't work", "no response from"),
		NewSet("asshole", "bastard", "bitch", "bullshit", "crap", "damn", "dick", "fuck", "fucked", "fucker",
			"fucking", "hell", "piss", "shit", "shitty"),
		NewSet("not found", "not foundation", "found", "stop, you", "you", "exit code", "exit", "éclair", "naïve"),
		NewSet("ab", "abc"), // a phrase under 3 bytes: no index
	}
}

func agreeOn(t *testing.T, text string) {
	t.Helper()
	norm := Normalize(text)
	for _, s := range testSets() {
		if got, want := s.FindNormalized(norm), s.findEach(norm); !reflect.DeepEqual(got, want) {
			t.Fatalf("FindNormalized(%q) = %v, want %v", norm, got, want)
		}
	}
}

func TestIndexAgreesOnExamples(t *testing.T) {
	for _, text := range []string{
		"", "ab", "the server is unavailable and the call failed: it timed out", "errored out errored",
		"what the hell. shitty shit", "not found, not foundation found", "exit codes; exit code 1; exit",
		"You STOP, you", "an éclair, naïve", "it didn’t work", "xyz" + strings.Repeat("is failing ", 3),
	} {
		agreeOn(t, text)
	}
	if m := testSets()[0].FindNormalized(Normalize("It timed out, then the call failed.")); len(m) != 2 ||
		m[0].Phrase != "timed out" || m[1].Phrase != "call failed" {
		t.Fatalf("FindNormalized = %v", m)
	}
}

// TestIndexAgreesOnRealCorpus compares both on every line of the real
// transcripts (../shared/corpus/real): prose, code, tool output, JSON.
func TestIndexAgreesOnRealCorpus(t *testing.T) {
	n := 0
	testcorpus.EachLine(t, testcorpus.Real(t), func(line []byte) {
		agreeOn(t, string(line))
		n++
	})
	t.Logf("%d lines", n)
}

func FuzzIndexAgrees(f *testing.F) {
	f.Add("the call failed: it timed out", "call failed", "timed out", "call")
	f.Add("\xff\xfe not found", "not found", "found", "no")
	f.Fuzz(func(t *testing.T, text, p1, p2, p3 string) {
		s := NewSet(p1, p2, p3)
		norm := Normalize(text)
		if got, want := s.FindNormalized(norm), s.findEach(norm); !reflect.DeepEqual(got, want) {
			t.Fatalf("FindNormalized(%q) with %q = %v, want %v", norm, s.phrases, got, want)
		}
		agreeOn(t, text)
	})
}

// BenchmarkFindNormalized: claim's phrases over every line of the real
// corpus, one pass through the index against a search per phrase.
func BenchmarkFindNormalized(b *testing.B) {
	var norms []string
	var n int64
	testcorpus.EachLine(b, testcorpus.Real(b), func(line []byte) {
		norms = append(norms, Normalize(string(line)))
		n += int64(len(line))
	})
	s := testSets()[0]
	for _, m := range []struct {
		name string
		find func(string) []Match
	}{{"index", s.FindNormalized}, {"each", s.findEach}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				for _, norm := range norms {
					m.find(norm)
				}
			}
		})
	}
}
