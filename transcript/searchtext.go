package transcript

import (
	"bytes"

	"github.com/valyala/fastjson"
)

// SearchTextVersion is bumped when what SearchText extracts changes: a
// search index built from another version's text is rebuilt.
const SearchTextVersion = 2

// SearchText appends to dst what a stored record says, for the full-text
// index: every string value of the JSON record, decoded, one per line —
// tool outputs and arguments, attachments, hook output, subagent progress,
// thinking — whatever the record's type, except the file snapshots and
// copies in a Claude tool result's structured copy (see
// copiedResultField). String values that hold JSON are read as JSON.
// Left out are values that only identify or time things and would fill
// the index with unique tokens: UUIDs, timestamps, base64-like blobs
// (images, signatures, encrypted reasoning) and the markers that replace
// them in stored records (see ElideBlobs). A record that is not JSON is
// indexed as it is.
func SearchText(dst, raw []byte) []byte {
	var p fastjson.Parser
	v, err := p.ParseBytes(raw)
	if err != nil {
		return appendLine(dst, raw)
	}
	return searchValue(dst, v, 0)
}

// RecordSearchText is what a stored row is found by, in both stores: every
// string of its transcript record (see SearchText; raw decoded, nil when
// it could not be), or a log line's message. A transcript row whose record
// is not JSON is found by its text and what the record holds.
func RecordSearchText(transcript bool, raw []byte, message string) []byte {
	if !transcript {
		return []byte(message)
	}
	if len(raw) == 0 || fastjson.ValidateBytes(raw) != nil {
		return append(append([]byte(message), '\n'), raw...)
	}
	return SearchText(nil, raw)
}

// maxSearchDepth bounds the nesting followed (records nest a few levels;
// JSON inside strings adds one each time).
const maxSearchDepth = 64

func searchValue(dst []byte, v *fastjson.Value, depth int) []byte {
	if depth > maxSearchDepth {
		return dst
	}
	switch v.Type() {
	case fastjson.TypeObject:
		v.GetObject().Visit(func(k []byte, x *fastjson.Value) {
			if string(k) == "toolUseResult" && x.Type() == fastjson.TypeObject {
				dst = searchFields(dst, x, depth+1, copiedResultField)
				return
			}
			dst = searchValue(dst, x, depth+1)
		})
	case fastjson.TypeArray:
		for _, x := range v.GetArray() {
			dst = searchValue(dst, x, depth+1)
		}
	case fastjson.TypeString:
		s := v.GetStringBytes()
		if len(s) == 0 || identifier(s) || ElidedBlob(s) {
			return dst
		}
		if t := bytes.TrimSpace(s); len(t) > 1 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
			var q fastjson.Parser
			if inner, err := q.ParseBytes(t); err == nil {
				return searchValue(dst, inner, depth+1)
			}
		}
		return appendLine(dst, s)
	}
	return dst
}

// copiedResultField names the fields of a Claude tool result's structured
// copy (toolUseResult) that the full-text index leaves out: snapshots of a
// file before the agent changed it (originalFile, originalFileContents:
// 15% of a corpus's indexed text, and not something the session said or
// did), and copies of what other rows of the session hold — a Read's file
// content (the tool result's text), an edit's strings (the call's
// arguments), a search's file names and a todo list (the result's text,
// the call's arguments). The rest of it (a command's full output, a
// patch, a subagent's answer) stays searchable.
var copiedResultField = map[string]bool{
	"originalFile": true, "originalFileContents": true, "file": true, "oldString": true, "newString": true,
	"filenames": true, "oldTodos": true, "newTodos": true,
}

// searchFields appends the search text of an object's fields but the
// skipped ones.
func searchFields(dst []byte, v *fastjson.Value, depth int, skip map[string]bool) []byte {
	v.GetObject().Visit(func(k []byte, x *fastjson.Value) {
		if !skip[string(k)] {
			dst = searchValue(dst, x, depth+1)
		}
	})
	return dst
}

func appendLine(dst, s []byte) []byte {
	if len(dst) > 0 {
		dst = append(dst, '\n')
	}
	return append(dst, s...)
}

// identifier reports whether a string value only identifies or times
// something: a UUID, an RFC 3339 timestamp, or a blob of 256+ bytes
// without white space written mostly in base64's alphabet.
func identifier(s []byte) bool {
	switch {
	case len(s) == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' && allHex(s):
		return true
	case len(s) >= 20 && len(s) <= 35 && digits(s[:4]) && s[4] == '-' && digits(s[5:7]) && s[7] == '-' && digits(s[8:10]) && s[10] == 'T':
		return true
	case len(s) >= 256:
		b64 := 0
		for _, c := range s {
			switch {
			case c == ' ' || c == '\n' || c == '\t' || c == '\r':
				return false
			case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_':
				b64++
			}
		}
		return b64*10 >= len(s)*9
	}
	return false
}

func allHex(s []byte) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}

func digits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
