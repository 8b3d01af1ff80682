package rawcodec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realRecords returns the lines of a real Claude Code transcript (the
// shared corpus), or skips when it is absent.
func realRecords(t testing.TB) [][]byte {
	t.Helper()
	files, _ := filepath.Glob("../../shared/corpus/real/claude/entireio-cli/*/*/*/full.jsonl")
	if len(files) == 0 {
		t.Skip("the real corpus (../shared/corpus/real) is absent")
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func TestBlockRoundTrip(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	real := realRecords(t)
	cases := map[string][][]byte{
		"one empty record":  {{}},
		"empty records":     {{}, []byte(`{}`), {}},
		"one record":        {[]byte(`{"type":"user"}`)},
		"magic-like record": {{0x28, 0xb5, 0x2f, 0xfd}, {0xff, 'r', 'b', 1, 2}},
		"big record":        {[]byte(strings.Repeat("x", 3*MaxBlockBytes)), []byte(`{"a":1}`)},
		"real transcript":   real,
	}
	for name, recs := range cases {
		t.Run(name, func(t *testing.T) {
			enc := c.EncodeBlock(nil, recs)
			got, err := c.DecodeBlock(enc)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(recs) {
				t.Fatalf("%d records back, want %d", len(got), len(recs))
			}
			for i := range recs {
				if !bytes.Equal(got[i], recs[i]) {
					t.Fatalf("record %d changed", i)
				}
			}
		})
	}
	// Records of one file compress much better together than one by one.
	var one, total int
	for _, r := range real {
		one += len(c.Encode(nil, r))
		total += len(r)
	}
	block := len(c.EncodeBlock(nil, real))
	t.Logf("%d records, %d bytes: %d per record, %d as a block", len(real), total, one, block)
	if total > 64<<10 && block*10 > one*8 {
		t.Errorf("a block of %d bytes is not 20%% smaller than %d bytes of per-record frames", block, one)
	}
}

func TestDecodeBlockRejectsCorruption(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	frame := func(plain []byte) []byte { return c.enc.EncodeAll(plain, nil) }
	good := c.EncodeBlock(nil, [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)})
	cases := map[string][]byte{
		"not zstd":         []byte(`{"a":1}`),
		"truncated frame":  good[:len(good)-3],
		"flipped byte":     append(append([]byte{}, good[:len(good)-1]...), good[len(good)-1]^0xff),
		"no count":         frame([]byte{}),
		"count too big":    frame([]byte{5, 1, 1, 'a', 'b'}),
		"lengths overrun":  frame([]byte{2, 1, 200, 'a', 'b'}),
		"bytes left over":  frame([]byte{1, 1, 'a', 'b'}),
		"unending varint":  frame([]byte{0x80, 0x80, 0x80}),
		"huge count field": frame([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := c.DecodeBlock(in)
			if !errors.Is(err, ErrCorruptBlock) {
				t.Fatalf("got %v, want a corrupt-block error", err)
			}
		})
	}
}

func TestRefs(t *testing.T) {
	for _, tc := range []struct {
		id int64
		i  int
	}{{1, 0}, {300, 127}, {1 << 40, 70000}} {
		ref := AppendRef(nil, tc.id, tc.i)
		id, i, ok := ParseRef(ref)
		if !ok || id != tc.id || i != tc.i {
			t.Errorf("ref %d/%d read back as %d/%d ok=%v", tc.id, tc.i, id, i, ok)
		}
		if !IsRef(ref) {
			t.Errorf("IsRef(%x) = false", ref)
		}
	}
	c, _ := New()
	for _, s := range [][]byte{nil, []byte(`{"a":1}`), c.Encode(nil, []byte(strings.Repeat("ab", 200))), {0xff, 'r', 'b'}, append(AppendRef(nil, 1, 2), 0)} {
		if _, _, ok := ParseRef(s); ok {
			t.Errorf("ParseRef(%x) accepted a value that is not a reference", s)
		}
	}
	if _, err := c.Decode(AppendRef(nil, 1, 2)); err == nil {
		t.Error("Decode returned a block reference as if it were a record")
	}
}

// FuzzDecodeBlock: any stored value, and any payload inside a valid zstd
// frame, decodes to records or to ErrCorruptBlock, never a panic; records
// that decode encode back to the same records.
func FuzzDecodeBlock(f *testing.F) {
	c, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{2, 1, 1, 'a', 'b'}, false)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, true)
	f.Add(c.EncodeBlock(nil, [][]byte{[]byte(`{"a":1}`)}), false)
	f.Fuzz(func(t *testing.T, b []byte, frame bool) {
		if frame {
			b = c.enc.EncodeAll(b, nil)
		}
		recs, err := c.DecodeBlock(b)
		if err != nil {
			if !errors.Is(err, ErrCorruptBlock) {
				t.Fatalf("error %v is not ErrCorruptBlock", err)
			}
			return
		}
		again, err := c.DecodeBlock(c.EncodeBlock(nil, recs))
		if err != nil || len(again) != len(recs) {
			t.Fatalf("re-encoded block: %d records, %v; want %d", len(again), err, len(recs))
		}
		for i := range recs {
			if !bytes.Equal(again[i], recs[i]) {
				t.Fatalf("record %d changed", i)
			}
		}
	})
}

// BenchmarkDecodeBlock is the cost of reading any record of a full block
// of real records: the whole block is decoded.
func BenchmarkDecodeBlock(b *testing.B) {
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	recs, size := fullBlock(realRecords(b))
	block := c.EncodeBlock(nil, recs)
	b.SetBytes(int64(size))
	b.ReportMetric(float64(len(block)), "block-bytes")
	b.ReportMetric(float64(len(recs)), "records")
	for b.Loop() {
		if _, err := c.DecodeBlock(block); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeBlock compresses a full block of real records: the
// compressor's work per block during ingest (B/op is what the heap sees).
func BenchmarkEncodeBlock(b *testing.B) {
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	recs, size := fullBlock(realRecords(b))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	e := c.NewBlockEncoder()
	var block []byte
	for b.Loop() {
		block = e.Encode(nil, recs)
	}
	b.ReportMetric(float64(len(block)), "block-bytes")
}

// fullBlock is the first records of recs that fit in one block, and their size.
func fullBlock(recs [][]byte) ([][]byte, int) {
	size := 0
	for i, r := range recs {
		if size+len(r) > MaxBlockBytes {
			return recs[:i], size
		}
		size += len(r)
	}
	return recs, size
}

// TestBlockEncoderKeepsEachBlock: a BlockEncoder reuses its buffers, so a
// block it returned must not change when it encodes the next one.
func TestBlockEncoderKeepsEachBlock(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	real := realRecords(t)
	first, _ := fullBlock(real)
	second, _ := fullBlock(real[len(first):])
	if len(second) == 0 {
		second = [][]byte{[]byte(`{"type":"user","message":"second"}`)}
	}
	e := c.NewBlockEncoder()
	a := e.Encode(nil, first)
	kept := bytes.Clone(a)
	b := e.Encode(nil, second)
	if !bytes.Equal(a, kept) {
		t.Fatal("encoding the second block changed the first")
	}
	for i, tc := range []struct {
		block []byte
		want  [][]byte
	}{{a, first}, {b, second}, {c.EncodeBlock(nil, first), first}} {
		got, err := c.DecodeBlock(tc.block)
		if err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("block %d: %d records, want %d", i, len(got), len(tc.want))
		}
		for j := range got {
			if !bytes.Equal(got[j], tc.want[j]) {
				t.Fatalf("block %d record %d differs", i, j)
			}
		}
	}
}
