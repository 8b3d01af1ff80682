package transcript

import (
	"bytes"

	"github.com/valyala/fastjson"
)

// SearchTextVersion is bumped when what SearchText extracts changes what a
// search finds: a search index built from another version's text is
// rebuilt. Leaving out repeats (saidBefore) did not bump it: an index with
// them finds the same rows, and rebuilding a large store's costs minutes.
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
// them in stored records (see ElideBlobs), and a long value the record's
// text already holds (see saidBefore). A record that is not JSON is
// indexed as it is.
func SearchText(dst, raw []byte) []byte {
	var p fastjson.Parser
	v, err := p.ParseBytes(raw)
	if err != nil {
		return appendLine(dst, raw)
	}
	return appendSearchText(dst, v)
}

// appendSearchText appends the search text of the parsed record v to dst.
func appendSearchText(dst []byte, v *fastjson.Value) []byte {
	w := textWalker{dst: dst, start: len(dst), budget: 64 << 10}
	w.value(v, 0)
	return w.dst
}

// RecordSearchText is what a stored row is found by, in both stores: every
// string of its transcript record (see SearchText; raw decoded, nil when
// it could not be), or a log line's message. A transcript row whose record
// is not JSON is found by its text and what the record holds.
func RecordSearchText(transcript bool, raw []byte, message string) []byte {
	var p fastjson.Parser
	return appendRecordText(&p, nil, transcript, raw, message)
}

// appendRecordText appends RecordSearchText's text to dst, parsing with p.
// A record the parser reads is walked: no validation pass first (it cost a
// second pass over every record and rejected none of the real corpus's
// 25,486 lines that the parser reads).
func appendRecordText(p *fastjson.Parser, dst []byte, transcript bool, raw []byte, message string) []byte {
	if !transcript {
		return append(dst, message...)
	}
	if len(raw) == 0 {
		return append(append(dst, message...), '\n')
	}
	v, err := p.ParseBytes(raw)
	if err != nil {
		return append(append(append(dst, message...), '\n'), raw...)
	}
	return appendSearchText(dst, v)
}

// A SearchTextReader reads the search texts of many rows (see
// RecordSearchText) with one JSON parser and one working buffer, so a row
// costs the heap only the text returned. It is not safe for concurrent
// use.
type SearchTextReader struct {
	p   fastjson.Parser
	buf []byte
}

// maxKeptText bounds the working buffer a SearchTextReader keeps.
const maxKeptText = 4 << 20

// RecordText is RecordSearchText's text for one row, in a slice of its own.
func (r *SearchTextReader) RecordText(transcript bool, raw []byte, message string) []byte {
	text := appendRecordText(&r.p, r.buf[:0], transcript, raw, message)
	if cap(text) <= maxKeptText {
		r.buf = text
	}
	if len(text) == 0 {
		return nil
	}
	return bytes.Clone(text)
}

// maxSearchDepth bounds the nesting followed (records nest a few levels;
// JSON inside strings adds one each time).
const maxSearchDepth = 64

// textWalker gathers a record's search text.
type textWalker struct {
	dst    []byte
	start  int // where the record's text starts in dst
	budget int // bytes saidBefore may still search
}

func (w *textWalker) value(v *fastjson.Value, depth int) {
	if depth > maxSearchDepth {
		return
	}
	switch v.Type() {
	case fastjson.TypeObject:
		v.GetObject().Visit(func(k []byte, x *fastjson.Value) {
			if string(k) == "toolUseResult" && x.Type() == fastjson.TypeObject {
				x.GetObject().Visit(func(k []byte, y *fastjson.Value) {
					if !copiedResultField[string(k)] {
						w.value(y, depth+2)
					}
				})
				return
			}
			w.value(x, depth+1)
		})
	case fastjson.TypeArray:
		for _, x := range v.GetArray() {
			w.value(x, depth+1)
		}
	case fastjson.TypeString:
		s := v.GetStringBytes()
		if len(s) == 0 || identifier(s) || ElidedBlob(s) {
			return
		}
		t := bytes.TrimSpace(s)
		if len(t) > 1 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
			var q fastjson.Parser
			if inner, err := q.ParseBytes(t); err == nil {
				w.value(inner, depth+1)
				return
			}
		}
		if w.saidBefore(t) {
			return
		}
		w.dst = appendLine(w.dst, s)
	}
}

// minRepeat is the shortest value saidBefore looks for: shorter ones cost
// the index little and are often legitimately said twice.
const minRepeat = 64

// saidBefore reports whether the record's text gathered so far already
// holds s. Records repeat themselves: a Claude command's result says its
// output in the message and again as the structured copy's stdout (and a
// subagent's answer as its content); a Codex command's end event holds the
// same output as stdout, aggregated_output and formatted_output. A second
// copy finds nothing the first does not, and was a twentieth of the
// indexed text. Only values of minRepeat bytes or more are looked for, and
// each earns 8 bytes of search per byte (past a first 64 KB), which keeps
// SearchText linear in the record's size.
func (w *textWalker) saidBefore(s []byte) bool {
	if len(s) < minRepeat {
		return false
	}
	w.budget += 8 * len(s)
	said := w.dst[w.start:]
	if len(said) < len(s) || len(said) > w.budget {
		return false
	}
	w.budget -= len(said)
	return bytes.Contains(said, s)
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
