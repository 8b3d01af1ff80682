package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAllLines drains a LineReader, copying each line's buffers (they are
// only valid until the next call).
func readAllLines(t *testing.T, lr *LineReader) []Line {
	t.Helper()
	var out []Line
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			// EOF is sticky.
			if _, err := lr.Next(); !errors.Is(err, io.EOF) {
				t.Fatalf("Next after EOF = %v, want io.EOF", err)
			}
			return out
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if l.Data != nil {
			l.Data = append([]byte{}, l.Data...)
		}
		if l.Raw != nil {
			l.Raw = append([]byte{}, l.Raw...)
		}
		out = append(out, l)
		if lr.Offset() != l.End {
			t.Fatalf("Offset() = %d after line %d, want its End %d", lr.Offset(), l.No, l.End)
		}
	}
}

// checkLayout asserts the invariants every read must satisfy: lines are
// numbered from first, tile the input exactly (Start of one = End of the
// previous, sum of lengths = size) and Raw is the input slice.
func checkLayout(t *testing.T, input []byte, lines []Line, start, first int64) {
	t.Helper()
	off := start
	var total int64
	for i, l := range lines {
		if l.No != first+int64(i) {
			t.Errorf("line %d: No = %d, want %d", i, l.No, first+int64(i))
		}
		if l.Start != off {
			t.Errorf("line %d: Start = %d, want %d", l.No, l.Start, off)
		}
		if l.End <= l.Start {
			t.Errorf("line %d: End %d <= Start %d", l.No, l.End, l.Start)
		}
		raw := input[l.Start-start : l.End-start]
		if !l.TooLong && !bytes.Equal(l.Raw, raw) {
			t.Errorf("line %d: Raw = %q, want %q", l.No, trunc(l.Raw), trunc(raw))
		}
		if l.Complete != bytes.HasSuffix(raw, []byte("\n")) {
			t.Errorf("line %d: Complete = %v for raw %q", l.No, l.Complete, trunc(raw))
		}
		if l.Complete && i != len(lines)-1 && !bytes.HasSuffix(raw, []byte("\n")) {
			t.Errorf("line %d: not the last line but not newline-terminated", l.No)
		}
		if !l.Complete && i != len(lines)-1 {
			t.Errorf("line %d: incomplete line before the end", l.No)
		}
		total += l.End - l.Start
		off = l.End
	}
	if total != int64(len(input)) {
		t.Errorf("sum of line lengths = %d, want file size %d", total, len(input))
	}
}

func trunc(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + fmt.Sprintf("…(%d bytes)", len(b))
	}
	return string(b)
}

// pattern returns n bytes of printable, position-dependent content (so a
// lost or duplicated chunk is detected), without newlines.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'A' + byte((i/7+int(seed))%26)
		if i%1000 == 999 {
			b[i] = '0' + byte(i/1000%10)
		}
	}
	return b
}

func TestLineReaderLongLines(t *testing.T) {
	oneMB := pattern(1<<20+12345, 1)
	fiveMB := pattern(5<<20, 2)
	var in bytes.Buffer
	in.WriteString("{\"first\":1}\n")
	in.Write(oneMB)
	in.WriteString("\n")
	in.Write(fiveMB)
	in.WriteString("\n")
	in.WriteString("tail")
	input := in.Bytes()

	for _, tc := range []struct {
		name string
		r    func() io.Reader
	}{
		{"plain", func() io.Reader { return bytes.NewReader(input) }},
		{"half reads", func() io.Reader { return iotest.HalfReader(bytes.NewReader(input)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := readAllLines(t, NewLineReader(tc.r(), 0, 1))
			if len(lines) != 4 {
				t.Fatalf("got %d lines, want 4", len(lines))
			}
			checkLayout(t, input, lines, 0, 1)
			want := [][]byte{[]byte(`{"first":1}`), oneMB, fiveMB, []byte("tail")}
			for i, w := range want {
				if !bytes.Equal(lines[i].Data, w) {
					t.Errorf("line %d: Data differs (len %d, want %d)", i+1, len(lines[i].Data), len(w))
				}
				if lines[i].TooLong {
					t.Errorf("line %d: TooLong", i+1)
				}
			}
			if lines[3].Complete {
				t.Error("last line without newline reported Complete")
			}
			if got := lines[2].End - lines[2].Start; got != int64(len(fiveMB)+1) {
				t.Errorf("5 MB line spans %d bytes, want %d", got, len(fiveMB)+1)
			}
		})
	}
}

func TestLineReaderShapes(t *testing.T) {
	type want struct {
		data     string
		complete bool
	}
	for _, tc := range []struct {
		name  string
		input string
		want  []want
	}{
		{"empty input", "", nil},
		{"single newline", "\n", []want{{"", true}}},
		{"LF lines", "a\nbb\n", []want{{"a", true}, {"bb", true}}},
		{"CRLF lines", "a\r\nbb\r\n", []want{{"a", true}, {"bb", true}}},
		{"CRLF last without newline", "a\r\nbb\r", []want{{"a", true}, {"bb", false}}},
		{"last line without newline", "a\nlast", []want{{"a", true}, {"last", false}}},
		{"empty lines kept", "\n\na\n\n", []want{{"", true}, {"", true}, {"a", true}, {"", true}}},
		{"blank CRLF line", "\r\n{}\r\n", []want{{"", true}, {"{}", true}}},
		{"bare CR is not a terminator", "a\rb\n", []want{{"a\rb", true}}},
		{"trailing spaces kept", "a  \n", []want{{"a  ", true}}},
		{"no newline at all", "{\"x\":1}", []want{{"{\"x\":1}", false}}},
		{"multibyte", "héllo\n✓\n", []want{{"héllo", true}, {"✓", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := []byte(tc.input)
			for _, start := range []int64{0, 1000} {
				lines := readAllLines(t, NewLineReader(iotest.OneByteReader(bytes.NewReader(input)), start, 7))
				if len(lines) != len(tc.want) {
					t.Fatalf("start %d: got %d lines, want %d", start, len(lines), len(tc.want))
				}
				checkLayout(t, input, lines, start, 7)
				for i, w := range tc.want {
					if string(lines[i].Data) != w.data || lines[i].Complete != w.complete {
						t.Errorf("start %d line %d: got (%q, %v), want (%q, %v)", start, i, lines[i].Data, lines[i].Complete, w.data, w.complete)
					}
				}
			}
		})
	}
}

func TestLineReaderTooLong(t *testing.T) {
	const limit = 10
	in := "short\n" +
		strings.Repeat("x", 25) + "\n" + // too long
		"next\n" +
		strings.Repeat("y", limit) + "\n" + // exactly at the limit: fine
		strings.Repeat("z", limit+1) + "\n" + // one over
		"ok\n" +
		strings.Repeat("w", limit+1) // unterminated and one over
	input := []byte(in)
	lr := NewLineReader(bytes.NewReader(input), 0, 1)
	lr.SetLimit(limit)
	lines := readAllLines(t, lr)
	if len(lines) != 7 {
		t.Fatalf("got %d lines, want 7", len(lines))
	}
	checkLayout(t, input, lines, 0, 1)
	for i, w := range []struct {
		data    string
		tooLong bool
	}{
		{"short", false},
		{"", true},
		{"next", false},
		{strings.Repeat("y", limit), false},
		{"", true},
		{"ok", false},
		{"", true},
	} {
		l := lines[i]
		if l.TooLong != w.tooLong {
			t.Errorf("line %d: TooLong = %v, want %v", l.No, l.TooLong, w.tooLong)
		}
		if w.tooLong {
			if l.Data != nil || l.Raw != nil {
				t.Errorf("line %d: too long but Data/Raw not nil", l.No)
			}
			continue
		}
		if string(l.Data) != w.data {
			t.Errorf("line %d: Data = %q, want %q", l.No, l.Data, w.data)
		}
	}
	if got := lines[1].End - lines[1].Start; got != 26 {
		t.Errorf("skipped line spans %d bytes, want 26", got)
	}
}

// TestLineReaderTooLongAcrossBuffers skips a line far larger than the
// reader's internal buffer, so the ErrBufferFull path runs while skipping.
func TestLineReaderTooLongAcrossBuffers(t *testing.T) {
	big := pattern(3<<20, 3)
	input := append(append([]byte("a\n"), big...), "\nb\n"...)
	lr := NewLineReader(bytes.NewReader(input), 0, 1)
	lr.SetLimit(1 << 20)
	lines := readAllLines(t, lr)
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3", len(lines))
	}
	checkLayout(t, input, lines, 0, 1)
	if !lines[1].TooLong || lines[1].Data != nil {
		t.Errorf("3 MB line with 1 MB limit: TooLong=%v Data=%d bytes", lines[1].TooLong, len(lines[1].Data))
	}
	if string(lines[2].Data) != "b" || lines[2].TooLong {
		t.Errorf("line after the skipped one = %q (TooLong %v)", lines[2].Data, lines[2].TooLong)
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	lr := NewLineReader(&failingReader{data: []byte("one\ntwo-partial"), err: boom}, 0, 1)
	l, err := lr.Next()
	if err != nil || string(l.Data) != "one" {
		t.Fatalf("first line = %q, %v", l.Data, err)
	}
	for i := 0; i < 2; i++ {
		_, err = lr.Next()
		if !errors.Is(err, boom) {
			t.Fatalf("call %d: err = %v, want the read error", i, err)
		}
		if errors.Is(err, io.EOF) {
			t.Fatal("read error reported as EOF")
		}
	}
	// The partial line was not consumed: a checkpoint taken now resumes
	// at its start.
	if lr.Offset() != 4 {
		t.Errorf("Offset = %d, want 4", lr.Offset())
	}
}

// TestLineReaderReset: a reader Reset onto new input (after EOF, mid-file,
// after an over-long line) returns exactly what a new reader does.
func TestLineReaderReset(t *testing.T) {
	inputs := []string{"a\nbb\n", "x\r\nlast", "", "\n\n{}\n", strings.Repeat("y", 300) + "\nz\n"}
	lr := NewLineReader(bytes.NewReader(nil), 0, 1)
	for i, in := range inputs {
		for _, start := range []int64{0, 1000} {
			want := readAllLines(t, NewLineReader(bytes.NewReader([]byte(in)), start, 7))
			lr.Reset(bytes.NewReader([]byte(in)), start, 7)
			got := readAllLines(t, lr)
			if len(got) != len(want) {
				t.Fatalf("input %d start %d: %d lines after Reset, want %d", i, start, len(got), len(want))
			}
			for k := range want {
				g, w := got[k], want[k]
				if string(g.Data) != string(w.Data) || string(g.Raw) != string(w.Raw) || g.No != w.No || g.Start != w.Start ||
					g.End != w.End || g.Complete != w.Complete || g.TooLong != w.TooLong {
					t.Errorf("input %d start %d line %d: %+v after Reset, want %+v", i, start, k, g, w)
				}
			}
		}
		// Stop mid-file, with a short limit, then Reset: nothing carries over.
		lr.Reset(bytes.NewReader([]byte(in+"more\n")), 0, 1)
		lr.SetLimit(2)
		_, _ = lr.Next()
	}
}
