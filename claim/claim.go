// Package claim reads what an agent's own prose claims about its tools:
// that a tool or server is unavailable, or that a call failed. The MCP
// lens holds such a claim against the evidence (a server that answered);
// the store keeps each assistant row's reading (Kinds, with Version) so
// the lens reads only the rows that claim something.
//
// A reading is coarse on purpose: it says which kinds of phrase a text
// holds anywhere. Whether a sentence also names the server or tool at hand
// is decided by the lens, which knows the subject.
package claim

import (
	"hash/fnv"
	"strings"

	"github.com/cortexhq/cortex/phrase"
)

// Kinds is a set of claim kinds, stored as an integer (0: no claim).
type Kinds uint8

// The kinds of claim.
const (
	// Unavailable: a tool, server or resource is said to be unavailable,
	// missing, not connected or not accessible.
	Unavailable Kinds = 1 << iota
	// Failure: a call is said to have failed, errored or timed out.
	Failure
)

// Has reports whether k holds every kind of o.
func (k Kinds) Has(o Kinds) bool { return k&o == o && o != 0 }

// Phrases of each kind, matched in normalized text (package phrase).
var (
	unavailable = phrase.NewSet(
		"is unavailable", "are unavailable", "is not available", "isn't available", "are not available",
		"aren't available", "not available in this", "is not accessible", "isn't accessible", "doesn't exist",
		"does not exist", "don't have access to", "do not have access to", "no access to", "is not connected",
		"isn't connected", "are not connected", "is not installed", "isn't installed", "is not configured",
		"isn't configured", "is not loaded", "isn't loaded", "cannot access", "can't access", "unable to access",
	)
	failure = phrase.NewSet(
		"returned an error", "returned error", "failed with an error", "failed with error", "threw an error",
		"errored", "errored out", "timed out", "call failed", "is failing", "keeps failing", "did not work",
		"didn't work", "failed to respond", "no response from",
	)
)

// logicVersion is bumped when how the phrases are applied changes (the
// phrases themselves are hashed into Version).
const logicVersion = 1

// Version identifies the rules a stored reading was made with: the phrases
// of every kind and the logic version. A reading of another version is
// read again.
var Version = func() int {
	h := fnv.New32a()
	for _, s := range []*phrase.Set{unavailable, failure} {
		h.Write([]byte(strings.Join(s.Phrases(), "\x00") + "\x01"))
	}
	h.Write([]byte{logicVersion})
	return int(h.Sum32()&0x7fffffff) | 1 // never 0: 0 is "not read"
}()

// Phrases returns the phrases of one kind (nil for none or several).
func Phrases(k Kinds) *phrase.Set {
	switch k {
	case Unavailable:
		return unavailable
	case Failure:
		return failure
	}
	return nil
}

// Read returns the kinds of claim text holds.
func Read(text string) Kinds {
	if text == "" {
		return 0
	}
	return ReadNormalized(phrase.Normalize(text))
}

// ReadNormalized is Read of text already normalized by phrase.Normalize.
func ReadNormalized(norm string) Kinds {
	var k Kinds
	if len(unavailable.FindNormalized(norm)) > 0 {
		k |= Unavailable
	}
	if len(failure.FindNormalized(norm)) > 0 {
		k |= Failure
	}
	return k
}
