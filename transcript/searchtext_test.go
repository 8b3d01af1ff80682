package transcript

import (
	"bytes"
	"os"
	"testing"

	"github.com/valyala/fastjson"
)

// In every Claude tool result of the real corpus, the full-text index
// leaves out the structured copy's file snapshots and copies and keeps its other strings: a command's output, a
// patch's lines.
func TestSearchTextLeavesOutFileSnapshots(t *testing.T) {
	var snapshots, kept int
	for _, f := range corpusFiles(t, true) {
		if f.Folder != "claude" {
			continue
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		var p fastjson.Parser
		eachLine(t, data, func(l Line) {
			v, err := p.ParseBytes(l.Data)
			if err != nil || v.Type() != fastjson.TypeObject {
				return
			}
			tur := v.Get("toolUseResult")
			if tur == nil || tur.Type() != fastjson.TypeObject {
				return
			}
			text := SearchText(nil, l.Data)
			lines := map[string]bool{}
			for _, s := range bytes.Split(text, []byte("\n")) {
				lines[string(s)] = true
			}
			var outputs [][]byte
			for _, k := range []string{"stdout", "stderr"} {
				if o := tur.Get(k); o != nil {
					outputs = append(outputs, searchValue(nil, o, 0))
				}
			}
			// The copied fields add nothing: the record without them is
			// indexed the same.
			if len(tur.GetStringBytes("originalFile")) > 0 {
				snapshots++
			}
			base := SearchText(nil, v.MarshalTo(nil)) // (marshalled the same way)
			for _, k := range []string{"originalFile", "originalFileContents", "file", "oldString", "newString", "filenames", "oldTodos", "newTodos"} {
				tur.Del(k)
			}
			if !bytes.Equal(SearchText(nil, v.MarshalTo(nil)), base) {
				t.Fatalf("%s:%d: a file snapshot or copy is indexed", f.Rel, l.No)
			}
			for _, o := range outputs {
				if !bytes.Contains(text, o) {
					t.Fatalf("%s:%d: a command's output is not indexed", f.Rel, l.No)
				}
			}
			for _, h := range tur.GetArray("structuredPatch") {
				for _, pl := range h.GetArray("lines") {
					if s := pl.GetStringBytes(); len(s) > 0 && !lines[string(s)] {
						t.Fatalf("%s:%d: a patch line %q is not indexed", f.Rel, l.No, s)
					}
					kept++
				}
			}
		})
	}
	t.Logf("%d file snapshots left out, %d patch lines kept", snapshots, kept)
	if snapshots == 0 || kept == 0 {
		t.Fatalf("%d snapshots, %d patch lines: the corpus should have both", snapshots, kept)
	}
}
