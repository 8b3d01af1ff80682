package voice

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
	"strings"
)

// logicVersion is bumped when how the rules are applied changes (the
// patterns themselves are hashed into Version).
const logicVersion = 5

// Version identifies the rules a stored reading was made with: the
// patterns of every category, the acceptance and mention patterns, the
// default abuse terms and the logic version. A reading of another version
// is read again.
var Version = func() int {
	h := fnv.New32a()
	for _, r := range rules {
		opener := "\x00"
		if r.opener {
			opener = "\x01"
		}
		h.Write([]byte(r.category + opener + r.expr.String() + "\x00"))
	}
	for _, re := range []string{acceptance.String(), mentionBefore.String(), mentionAfter.String(), aimed.String(),
		sentenceEnd.String(), askingWord.String(), strings.Join(DefaultAbuseTerms, ","), strings.Join(notNegations, ","),
		strconv.Itoa(leadWords)} {
		h.Write([]byte(re + "\x00"))
	}
	h.Write([]byte{logicVersion})
	return int(h.Sum32()&0x7fffffff) | 1 // never 0: 0 is "not read"
}()

// Encode renders a reading for storage: "" when it says nothing.
func Encode(r Reading) string {
	if len(r.Categories) == 0 && len(r.Phrases) == 0 && len(r.Terms) == 0 {
		return ""
	}
	b, _ := json.Marshal(r) // a Reading always encodes
	return string(b)
}

// Decode reads a stored reading; "" is the empty reading. A value that is
// not a reading is an error (read the text again instead).
func Decode(s string) (Reading, error) {
	var r Reading
	if s == "" {
		return r, nil
	}
	err := json.Unmarshal([]byte(s), &r)
	return r, err
}
