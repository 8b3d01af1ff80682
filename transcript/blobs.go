package transcript

import (
	"bytes"
	"strconv"
	"strings"
)

// Opaque blobs in records: base64 images pasted into a conversation or
// read by a tool, thinking-block signatures, encrypted reasoning. They are
// an eighth of a transcript's bytes and, as they do not compress, nearly
// half of its stored raw records, yet nothing reads them: no parser, lens
// or view decodes them, the full-text index leaves them out (see
// SearchText), and a secret in a screenshot is beyond any redaction rule.
// The store keeps a record's structure and replaces each such value by a
// marker that says how many bytes it held (ElideBlobs).

// minBlob is the shortest string value taken for a blob (the length from
// which SearchText leaves base64-like values out).
const minBlob = 256

// blobMarkerPrefix and blobMarkerSuffix frame the marker that replaces a
// blob in a stored record: "[cortex: 12345-byte blob not stored]".
const (
	blobMarkerPrefix = "[cortex: "
	blobMarkerSuffix = "-byte blob not stored]"
)

// b64 gives each byte of the base64 and base64url alphabets its class:
// 1 upper case, 2 lower case, 3 digit, 4 separator (+ / - _), 5 padding;
// 0 is any other byte.
var b64 = func() (t [256]uint8) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c], t[c+'a'-'A'] = 1, 2
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = 3
	}
	for _, c := range "+/-_" {
		t[c] = 4
	}
	t['='] = 5
	return t
}()

// blobSample is how much of a value the statistics of isBlob read (the
// alphabet is checked to the end).
const blobSample = 4096

// isBlob reports whether a JSON string value as written (escapes and all)
// is an opaque blob: 256+ bytes, every one of them in the base64 or
// base64url alphabet, optionally after a data URL's "data:…;base64,"
// head, and looking like encoded bytes, not words — upper and lower case
// letters and digits that keep changing places or few separators, not
// starting with a slash. A value with any
// escape, white space or punctuation — text, code, a URL — is not one,
// nor is a long path or slug written in the alphabet.
func isBlob(s []byte) bool {
	if len(s) < minBlob {
		return false
	}
	if bytes.HasPrefix(s, []byte("data:")) {
		head := s[:min(len(s), 128)]
		i := bytes.Index(head, []byte(";base64,"))
		if i < 0 {
			return false
		}
		s = s[i+len(";base64,"):]
		if len(s) < minBlob {
			return false
		}
	}
	if s[0] == '/' {
		return false
	}
	sample := s[:min(len(s), blobSample)]
	var seen [8]bool
	changes, seps, prev := 0, 0, uint8(0)
	for _, c := range sample {
		k := b64[c]
		if k == 0 {
			return false
		}
		seen[k] = true
		// Branch-free: in random data the next class is a coin toss.
		d := uint(k ^ prev)
		changes += int((d + 0xff) >> 8)
		seps += int((uint(k^4)+0xff)>>8 ^ 1)
		prev = k
	}
	for _, c := range s[len(sample):] {
		if b64[c] == 0 {
			return false
		}
	}
	// Random base64 changes class (upper, lower, digit, other) at ~64% of
	// its symbols and has ~3% separators (two of its 64 symbols); the
	// base64 of an image with flat areas changes less (37% in a real
	// screenshot) but has no more separators. A path or slug of words
	// changes class less and has more separators (a long path of short
	// CamelCase segments with digits: ~42% and 5%).
	n := len(sample)
	return seen[1] && seen[2] && seen[3] && (changes*2 >= n || seps*30 <= n)
}

// ElidedBlob reports whether a decoded string value is the marker that
// replaced a blob in a stored record.
func ElidedBlob(s []byte) bool {
	return len(s) > len(blobMarkerPrefix)+len(blobMarkerSuffix) && bytes.HasPrefix(s, []byte(blobMarkerPrefix)) &&
		bytes.HasSuffix(s, []byte(blobMarkerSuffix))
}

// ElideBlobs returns a copy of the JSON record raw in which every string
// value that is an opaque blob (see isBlob) is replaced by a marker naming
// its size, and the bytes it left out. Everything else — keys, structure,
// every other value, byte for byte — is kept, so the copy parses to the
// same entry, events and text. raw must be valid JSON (a record that
// parsed): its only quotes then delimit strings.
func ElideBlobs(raw []byte) ([]byte, int) {
	var out []byte
	elided, last := 0, 0
	for i := 0; i < len(raw); {
		k := bytes.IndexByte(raw[i:], '"')
		if k < 0 {
			break
		}
		start := i + k + 1
		end := closingQuote(raw, start)
		if end < 0 {
			break // not valid JSON: kept as it is
		}
		i = end + 1
		if end-start < minBlob || !isBlob(raw[start:end]) || isKey(raw, i) {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(raw))
		}
		out = append(out, raw[last:start]...)
		out = append(out, blobMarkerPrefix...)
		out = strconv.AppendInt(out, int64(end-start), 10)
		out = append(out, blobMarkerSuffix...)
		last = end
		elided += end - start
	}
	if out == nil {
		return bytes.Clone(raw), 0
	}
	return append(out, raw[last:]...), elided
}

// closingQuote returns the index of the quote that ends the JSON string
// whose contents start at start, or -1.
func closingQuote(raw []byte, start int) int {
	for j := start; ; {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		backslashes := 0
		for p := q - 1; p >= start && raw[p] == '\\'; p-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q
		}
		j = q + 1
	}
}

// isKey reports whether the string that ended before raw[i] is an object
// key (a colon follows it).
func isKey(raw []byte, i int) bool {
	for ; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// KeyedByID reports whether a record key is the id its agent gave the
// record (a Claude uuid, a Codex response item id), not a hash of the
// record's content: such a record may be stored with its blobs elided, as
// its key and its re-reads do not depend on them.
func KeyedByID(key string) bool {
	return strings.HasPrefix(key, "u:") || strings.HasPrefix(key, "p:")
}
