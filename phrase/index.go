package phrase

import "strings"

// Index finds, in one pass over a text, where any of a list of texts
// starts: the texts are grouped by a hash of their first 3 bytes, so each
// position of the text is looked up once instead of the text being
// searched once per entry. Phrase sets (FindNormalized) and the voice
// rules' prefilter use it.
type Index struct {
	texts []string
	// slot maps the hash of a text's first 3 bytes to 1 + the index of
	// its group (indexes into texts, in order).
	slot   *[1 << 16]uint16
	groups [][]int
}

// NewIndex indexes texts, or returns nil when one is shorter than 3
// bytes.
func NewIndex(texts []string) *Index {
	for _, t := range texts {
		if len(t) < 3 {
			return nil
		}
	}
	ix := &Index{texts: texts, slot: new([1 << 16]uint16)}
	for i, t := range texts {
		h := hash3(t[0], t[1], t[2])
		if ix.slot[h] == 0 {
			ix.groups = append(ix.groups, nil)
			ix.slot[h] = uint16(len(ix.groups))
		}
		g := ix.slot[h] - 1
		ix.groups[g] = append(ix.groups[g], i)
	}
	return ix
}

func hash3(a, b, c byte) uint16 {
	return uint16((uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 0x9E3779B1 >> 16)
}

// Scan calls f(i, at) for every position at of s where texts[i] starts,
// in position order (and in the order of texts at one position), until f
// returns false.
func (ix *Index) Scan(s string, f func(i, at int) bool) {
	for at := 0; at+3 <= len(s); at++ {
		k := ix.slot[hash3(s[at], s[at+1], s[at+2])]
		if k == 0 {
			continue
		}
		for _, i := range ix.groups[k-1] {
			if strings.HasPrefix(s[at:], ix.texts[i]) && !f(i, at) {
				return
			}
		}
	}
}
