package syslogd

import (
	"bufio"
	"errors"
	"io"
	"strconv"
)

// maxLenDigits bounds an octet count's digits (RFC 6587 §3.4.1 MSG-LEN).
const maxLenDigits = 10

// frameReader splits a TCP stream into syslog messages (RFC 6587),
// choosing the framing per message: a message that starts with a length
// ("123 <34>1 …") is octet-counted, anything else runs to the next LF
// (non-transparent framing; a trailing CR is dropped). Messages longer
// than max are cut to max bytes; the rest of them is read and discarded,
// so the stream stays in step.
type frameReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next non-empty message (valid until the following call)
// and its size on the wire (more than len(data) when it was cut). At the
// end of the stream it returns io.EOF; a last message without LF is
// returned first.
func (f *frameReader) next() (data []byte, size int, err error) {
	for {
		b, err := f.r.Peek(1)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case b[0] == '\n' || b[0] == '\r' || b[0] == 0:
			// Blank lines and stray trailers between messages.
			_, _ = f.r.ReadByte()
			continue
		case b[0] >= '1' && b[0] <= '9':
			if n, digits, ok := f.octetCount(); ok {
				if _, err := f.r.Discard(digits + 1); err != nil {
					return nil, 0, err
				}
				return f.counted(n)
			}
		}
		return f.line()
	}
}

// octetCount peeks at a "MSG-LEN SP" prefix. It only peeks as far as the
// first non-digit, which every message has (at least its LF), so it never
// waits for bytes a sender has not sent.
func (f *frameReader) octetCount() (n, digits int, ok bool) {
	for i := 1; i <= maxLenDigits+1; i++ {
		b, err := f.r.Peek(i)
		if err != nil {
			return 0, 0, false
		}
		c := b[i-1]
		if c >= '0' && c <= '9' {
			continue
		}
		if c != ' ' || i == 1 {
			return 0, 0, false
		}
		v, err := strconv.Atoi(string(b[:i-1]))
		if err != nil || v <= 0 {
			return 0, 0, false
		}
		return v, i - 1, true
	}
	return 0, 0, false
}

// counted reads an octet-counted message of n bytes.
func (f *frameReader) counted(n int) ([]byte, int, error) {
	keep := min(n, f.max)
	f.buf = grow(f.buf, keep)
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		return nil, 0, truncatedErr(err)
	}
	if n > keep {
		if _, err := f.r.Discard(n - keep); err != nil {
			return nil, 0, truncatedErr(err)
		}
	}
	data := f.buf
	// Some senders end counted messages with LF too.
	for len(data) > 0 && (data[len(data)-1] == '\n' || data[len(data)-1] == '\r') {
		data = data[:len(data)-1]
	}
	if len(data) == 0 {
		return f.next()
	}
	return data, n, nil
}

// line reads a message up to LF.
func (f *frameReader) line() ([]byte, int, error) {
	f.buf = f.buf[:0]
	wire := 0
	for {
		chunk, err := f.r.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1] // the LF
		}
		wire += len(chunk)
		if room := f.max - len(f.buf); room > 0 {
			f.buf = append(f.buf, chunk[:min(len(chunk), room)]...)
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && wire > 0 {
			break // the last message, without LF
		}
		return nil, 0, err
	}
	data := f.buf
	if wire == len(data) && len(data) > 0 && data[len(data)-1] == '\r' {
		data, wire = data[:len(data)-1], wire-1
	}
	if wire == 0 {
		return f.next()
	}
	return data, wire, nil
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// truncatedErr reports a stream that ended inside an octet-counted message.
func truncatedErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
