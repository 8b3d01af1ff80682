package sqlite

import (
	"fmt"
	"slices"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
)

// A tool call's argument and output previews (ai_mcp_events.arguments_json
// and output_preview) are copies of what its raw records say, cut to 1 KB
// and 512 bytes: half of the table's bytes. They are stored compressed, as
// a BLOB holding one zstd frame, when that is smaller; otherwise, and in
// stores written before, as TEXT. Readers scan them with packedText, the
// push exports them decoded (exportDecoded), and nothing in SQL reads what
// they say. On the 1 GB corpus the two columns' 53.4 MB became 35.4 MB.

// minPackedText is the shortest value packText compresses: shorter ones
// seldom shrink by more than the frame's header.
const minPackedText = 96

// packedColumns are the columns packText writes, by table.
var packedColumns = map[string][]string{"ai_mcp_events": {"arguments_json", "output_preview"}}

// packed reports whether packText writes table's column.
func packed(table, column string) bool { return slices.Contains(packedColumns[table], column) }

// packText is the stored value of a packed column: the text compressed as
// a BLOB when that is smaller, else the text.
func (db *DB) packText(s string) any {
	if len(s) < minPackedText {
		return s
	}
	if b := db.codec.Encode(nil, []byte(s)); len(b) < len(s) {
		return b
	}
	return s
}

// unpackText restores a packed column's stored value: a TEXT as it is, a
// BLOB decompressed, NULL as "".
func unpackText(c *rawcodec.Codec, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case []byte:
		out, err := c.Decode(x)
		if err != nil {
			return "", fmt.Errorf("stored tool call text: %w", err)
		}
		return string(out), nil
	default:
		return "", fmt.Errorf("stored tool call text is a %T", v)
	}
}

// packedText scans a packed column into dst (see unpackText).
func (db *DB) packedText(dst *string) textScanner { return textScanner{db.codec, dst} }

// textScanner is a sql.Scanner for a packed column.
type textScanner struct {
	codec *rawcodec.Codec
	dst   *string
}

// Scan implements sql.Scanner.
func (t textScanner) Scan(v any) error {
	s, err := unpackText(t.codec, v)
	*t.dst = s
	return err
}

// textPacker compresses the tool-call previews of a batch's records on a
// goroutine of its own, started before the writer stores the batch's rows;
// by the time the writer stores the batch's tool calls it only looks them
// up (compressing them on the writer cost it 7% of its time).
type textPacker struct {
	done   chan struct{}
	packed map[string]any // a preview's stored value, by the preview
}

// startPacking packs the previews of recs' tool calls that packText may
// compress; nil when there are none.
func (db *DB) startPacking(recs []cortex.ImportRecord) *textPacker {
	var texts []string
	for i := range recs {
		for j := range recs[i].Events.Tools {
			t := &recs[i].Events.Tools[j]
			for _, s := range [...]string{t.ArgumentsJSON, t.OutputPreview} {
				if len(s) >= minPackedText {
					texts = append(texts, s)
				}
			}
		}
	}
	if len(texts) == 0 {
		return nil
	}
	p := &textPacker{done: make(chan struct{}), packed: make(map[string]any, len(texts))}
	go func() {
		defer close(p.done)
		for _, s := range texts {
			if _, ok := p.packed[s]; !ok {
				p.packed[s] = db.packText(s)
			}
		}
	}()
	return p
}

// pack is the stored value of a packed column (NULL for nil), from what
// the packer prepared when it has it (p may be nil).
func (p *textPacker) pack(db *DB, s *string) any {
	if s == nil {
		return nil
	}
	if p != nil {
		<-p.done
		if v, ok := p.packed[*s]; ok {
			return v
		}
	}
	return db.packText(*s)
}
