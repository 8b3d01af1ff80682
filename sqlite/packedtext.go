package sqlite

import (
	"fmt"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
)

// A tool call's argument and output previews (ai_mcp_events.arguments_json
// and output_preview) are copies of what its raw records say, cut to 1 KB
// and 512 bytes: half of the table's bytes. They are stored compressed, as
// a BLOB holding one zstd frame, when that is smaller; otherwise, and in
// stores written before, as TEXT. Readers scan them with packedText, the
// push exports them decoded (unpackExport), and nothing in SQL reads what
// they say. On the 1 GB corpus the two columns' 53.4 MB became 35.4 MB.

// minPackedText is the shortest value packText compresses: shorter ones
// seldom shrink by more than the frame's header.
const minPackedText = 96

// packedColumns are the columns packText writes, by table.
var packedColumns = map[string][]string{"ai_mcp_events": {"arguments_json", "output_preview"}}

// packed reports whether packText writes table's column.
func packed(table, column string) bool {
	for _, c := range packedColumns[table] {
		if c == column {
			return true
		}
	}
	return false
}

// packText is the stored value of a packed column: NULL for nil, the text
// compressed as a BLOB when that is smaller, else the text.
func (db *DB) packText(s *string) any {
	if s == nil {
		return nil
	}
	return db.packString(*s)
}

func (db *DB) packString(s string) any {
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

// packedText scans a packed column into dst (see unpack).
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

// startPacking packs the previews of recs' tool calls (see packString).
// recs must not change until the packer is done.
func (db *DB) startPacking(recs []cortex.ImportRecord) *textPacker {
	p := &textPacker{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		m := map[string]any{}
		for i := range recs {
			for j := range recs[i].Events.Tools {
				t := &recs[i].Events.Tools[j]
				for _, s := range [...]string{t.ArgumentsJSON, t.OutputPreview} {
					if _, ok := m[s]; !ok && len(s) >= minPackedText {
						m[s] = db.packString(s)
					}
				}
			}
		}
		p.packed = m
	}()
	return p
}

// pack is packText, with what the packer prepared (p may be nil).
func (p *textPacker) pack(db *DB, s *string) any {
	if s != nil && p != nil {
		<-p.done
		if v, ok := p.packed[*s]; ok {
			return v
		}
	}
	return db.packText(s)
}
