package transcript

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestElideBlobs(t *testing.T) {
	// What images, signatures and encrypted reasoning hold: random bytes
	// in base64.
	random := make([]byte, 288)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	b64 := base64.StdEncoding.EncodeToString(random)
	// An image with flat areas: runs of zero bytes between random ones.
	flat := make([]byte, len(random))
	for i := 0; i < len(flat); i += 5 {
		flat[i] = random[i]
	}
	flat64 := base64.StdEncoding.EncodeToString(flat)
	url := "https://github.com/" + strings.Repeat("abcdefgh/", 40) + "file.go"
	path := "/" + strings.Repeat("abcdefgh/", 40) + "x"
	longPath := "Users/Someone2024/" + strings.Repeat("LongDirectoryName1/", 20)
	slug := strings.Repeat("fix-Parser-bug-1234-", 20)
	escaped := strings.Repeat(`abc\/def`, 40)
	cases := []struct {
		name, in, want string
		elided         int
	}{
		// Shapes of real records (claude/… image blocks, thinking signatures,
		// toolUseResult.file.base64), shortened.
		{"image block", `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}`,
			`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"[cortex: 384-byte blob not stored]"}}`, 384},
		{"signature and data URL", `{"signature":"` + b64 + `", "image_url" : "data:image/png;base64,` + b64 + `"}`,
			`{"signature":"[cortex: 384-byte blob not stored]", "image_url" : "[cortex: 406-byte blob not stored]"}`, 384 + 406},
		{"base64url", `["` + base64.URLEncoding.EncodeToString(random) + `"]`, `["[cortex: 384-byte blob not stored]"]`, 384},
		{"flat image", `{"data":"` + flat64 + `"}`, `{"data":"[cortex: 384-byte blob not stored]"}`, 384},
		{"short value kept", `{"data":"` + b64[:255] + `"}`, `{"data":"` + b64[:255] + `"}`, 0},
		{"URL kept", `{"u":"` + url + `"}`, `{"u":"` + url + `"}`, 0},
		{"path without dots kept", `{"p":"` + path + `"}`, `{"p":"` + path + `"}`, 0},
		{"long path kept", `{"p":"` + longPath + `"}`, `{"p":"` + longPath + `"}`, 0},
		{"slug kept", `{"p":"` + slug + `"}`, `{"p":"` + slug + `"}`, 0},
		{"lower case only kept", `{"p":"` + strings.Repeat("abcdefghij", 30) + `"}`, `{"p":"` + strings.Repeat("abcdefghij", 30) + `"}`, 0},
		{"escaped value kept", `{"e":"` + escaped + `"}`, `{"e":"` + escaped + `"}`, 0},
		{"text kept", `{"t":"` + strings.Repeat("word ", 80) + `"}`, `{"t":"` + strings.Repeat("word ", 80) + `"}`, 0},
		{"key kept", `{"` + b64 + `":1}`, `{"` + b64 + `":1}`, 0},
		{"escaped quotes before a blob", `{"a":"say \"hi\\\\\"","b":"` + b64 + `"}`,
			`{"a":"say \"hi\\\\\"","b":"[cortex: 384-byte blob not stored]"}`, 384},
		{"not JSON", `plain "unterminated`, `plain "unterminated`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := []byte(c.in)
			got, n := ElideBlobs(in)
			if string(got) != c.want || n != c.elided {
				t.Fatalf("ElideBlobs = %s, %d\nwant %s, %d", got, n, c.want, c.elided)
			}
			if string(in) != c.in {
				t.Fatal("ElideBlobs changed its input")
			}
			if len(got) > 0 && &got[0] == &in[0] {
				t.Fatal("ElideBlobs returned its input, not a copy")
			}
		})
	}
}

func TestElidedBlobMarker(t *testing.T) {
	for s, want := range map[string]bool{
		"[cortex: 384-byte blob not stored]": true,
		"[cortex: -byte blob not stored]":    false,
		"[cortex: 384-byte blob":             false,
		"a [cortex: 1-byte blob not stored]": false,
	} {
		if got := ElidedBlob([]byte(s)); got != want {
			t.Errorf("ElidedBlob(%q) = %v, want %v", s, got, want)
		}
	}
}

// Every record of the real corpus that ingest would store without its
// blobs parses, from the stored form, to what it parsed to whole: the
// same entry, events, usage and full-search text, and the same text read
// back from the record. Each file is read by two parsers in step (a
// parser carries state from record to record), one given the lines as
// written, the other the stored forms.
func TestElidedRecordsParseTheSame(t *testing.T) {
	var records, elidedRecords, elided, total int
	for _, f := range corpusFiles(t, true) {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		format, err := Sniff(data[:min(len(data), 64<<10)])
		if err != nil || format != FormatClaude && format != FormatCodex {
			continue // Gemini chats are parsed whole, not record by record
		}
		ctx := ContextFromPath(f.Path, format)
		var whole, stored RecordParser = NewClaudeParser(ctx), NewClaudeParser(ctx)
		if format == FormatCodex {
			whole, stored = NewCodexParser(ctx, CodexState{}), NewCodexParser(ctx, CodexState{})
		}
		eachLine(t, data, func(l Line) {
			total += len(l.Data)
			line := append([]byte(nil), l.Data...)
			rs := ParseLine(whole, line, l.No, l.Complete)
			out := line
			if len(rs) > 0 && rs[0].Err == nil && rs[0].Skip == "" && KeyedByID(rs[0].Entry.RecordKey) {
				records++
				var n int
				if out, n = ElideBlobs(line); n > 0 {
					elidedRecords++
					elided += n
					if !json.Valid(out) {
						t.Fatalf("%s:%d: the elided record is not JSON", f.Rel, l.No)
					}
				}
				if !bytes.Equal(SearchText(nil, out), SearchText(nil, line)) {
					t.Fatalf("%s:%d: the search text changed", f.Rel, l.No)
				}
				want, wok := StoredText(rs[0].Entry.Tool, line, rs[0].Entry.ToolName)
				got, gok := StoredText(rs[0].Entry.Tool, out, rs[0].Entry.ToolName)
				if got != want || gok != wok {
					t.Fatalf("%s:%d: the text read from the record changed", f.Rel, l.No)
				}
			}
			rs2 := ParseLine(stored, out, l.No, l.Complete)
			if len(rs2) != len(rs) {
				t.Fatalf("%s:%d: %d results from the stored form, %d from the line", f.Rel, l.No, len(rs2), len(rs))
			}
			for i := range rs {
				a, b := rs[i], rs2[i]
				a.Raw, b.Raw = nil, nil
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("%s:%d: parsed from the stored form:\n%+v\nfrom the line:\n%+v", f.Rel, l.No, b, a)
				}
			}
		})
	}
	t.Logf("%d of %d records keyed by id had blobs: %d of %d bytes elided (%.1f%%)", elidedRecords, records, elided, total,
		100*float64(elided)/float64(total))
	if elidedRecords == 0 || elided < total/20 {
		t.Fatalf("only %d bytes of %d elided in %d records", elided, total, elidedRecords)
	}
}
