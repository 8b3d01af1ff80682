package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxRecordBytes bounds one physical line. Longer lines are reported as a
// parse error and skipped (their bytes are consumed, memory stays bounded).
// Real transcripts have lines of 1 MB+ (base64 images); 64 MiB leaves ample
// room.
const MaxRecordBytes = 64 << 20

// Line is one physical line of a JSONL file.
type Line struct {
	// Data is the line without its terminator. It is only valid until the
	// next call to Next.
	Data []byte
	// Raw is the line's exact bytes including its terminator (nil when
	// TooLong); valid until the next call to Next.
	Raw []byte
	// No is the 1-based line number.
	No int64
	// Start and End are byte offsets of the line in the file; End includes
	// the newline when Complete.
	Start, End int64
	// Complete is true when the line ended with a newline.
	Complete bool
	// TooLong is set when the line exceeded the reader's limit; Data is
	// then nil.
	TooLong bool
}

// LineReader reads lines of any length (up to a limit) from a transcript
// file, tracking byte offsets so ingest can checkpoint exactly.
type LineReader struct {
	r     *bufio.Reader
	buf   []byte
	off   int64
	no    int64
	limit int
	err   error
}

// NewLineReader reads from r, whose first byte is at file offset start and
// whose first line has number firstLine.
func NewLineReader(r io.Reader, start, firstLine int64) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 256<<10), off: start, no: firstLine - 1, limit: MaxRecordBytes}
}

// maxKeptLine bounds the line buffer Reset keeps for the next file.
const maxKeptLine = 1 << 20

// Reset makes lr read from r as NewLineReader(r, start, firstLine) would,
// reusing its buffers (a worker reads file after file).
func (lr *LineReader) Reset(r io.Reader, start, firstLine int64) {
	lr.r.Reset(r)
	if cap(lr.buf) > maxKeptLine {
		lr.buf = nil
	}
	lr.buf = lr.buf[:0]
	lr.off, lr.no, lr.limit, lr.err = start, firstLine-1, MaxRecordBytes, nil
}

// SetLimit changes the maximum line length (for tests).
func (lr *LineReader) SetLimit(n int) { lr.limit = n }

// Offset is the file offset just after the last line returned.
func (lr *LineReader) Offset() int64 { return lr.off }

// Next returns the next line. It returns io.EOF when the input is exhausted;
// a final line without newline is returned with Complete=false first.
func (lr *LineReader) Next() (Line, error) {
	if lr.err != nil {
		return Line{}, lr.err
	}
	lr.buf = lr.buf[:0]
	tooLong := false
	var n int64
	for {
		frag, err := lr.r.ReadSlice('\n')
		n += int64(len(frag))
		if !tooLong {
			if len(lr.buf)+len(frag) > lr.limit+1 {
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			lr.err = fmt.Errorf("read line %d: %w", lr.no+1, err)
			return Line{}, lr.err
		}
		if n == 0 {
			lr.err = io.EOF
			return Line{}, io.EOF
		}
		complete := err == nil
		if !complete && !tooLong && len(lr.buf) > lr.limit {
			// An unterminated last line has no newline to allow for.
			tooLong = true
			lr.buf = lr.buf[:0]
		}
		lr.no++
		l := Line{No: lr.no, Start: lr.off, End: lr.off + n, Complete: complete, TooLong: tooLong}
		lr.off += n
		if !tooLong {
			l.Raw = lr.buf
			d := lr.buf
			if complete {
				d = d[:len(d)-1]
			}
			l.Data = bytes.TrimRight(d, "\r")
		}
		if !complete {
			lr.err = io.EOF
		}
		return l, nil
	}
}
