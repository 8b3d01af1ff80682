package syslogd

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type gotFrame struct {
	data string
	size int
}

func frames(t *testing.T, r io.Reader, max int) ([]gotFrame, error) {
	t.Helper()
	fr := newFrameReader(r, max)
	var out []gotFrame
	for {
		data, size, err := fr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, gotFrame{string(data), size})
	}
}

func TestFraming(t *testing.T) {
	long := strings.Repeat("x", 50)
	for _, c := range []struct {
		name, in string
		max      int
		want     []gotFrame
		err      bool
	}{
		{name: "LF", in: "<13>a\n<14>b\n", want: []gotFrame{{"<13>a", 5}, {"<14>b", 5}}},
		{name: "CRLF and blank lines", in: "\n<13>a\r\n\r\n<14>b", want: []gotFrame{{"<13>a", 5}, {"<14>b", 5}}},
		{name: "octet counted", in: "5 <13>a6 <14>bc", want: []gotFrame{{"<13>a", 5}, {"<14>bc", 6}}},
		{name: "octet counted with LF", in: "5 <13>a\n6 <14>b\n", want: []gotFrame{{"<13>a", 5}, {"<14>b", 6}}},
		{name: "mixed", in: "5 <13>a<14>b\n3 <1>", want: []gotFrame{{"<13>a", 5}, {"<14>b", 5}, {"<1>", 3}}},
		{name: "digits that are not a length", in: "2026-03-10 boot\n12345\n", want: []gotFrame{{"2026-03-10 boot", 15}, {"12345", 5}}},
		{name: "embedded LF in counted message", in: "9 <13>a\nb\nc", want: []gotFrame{{"<13>a\nb\nc", 9}}},
		{name: "oversized line", in: "<13>" + long + "\n<14>b\n", max: 10, want: []gotFrame{{"<13>" + long[:6], 54}, {"<14>b", 5}}},
		{name: "oversized counted", in: "54 <13>" + long + "<14>b\n", max: 10, want: []gotFrame{{"<13>" + long[:6], 54}, {"<14>b", 5}}},
		{name: "stream ends inside counted message", in: "9 <13>a", err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			max := c.max
			if max == 0 {
				max = 1024
			}
			for _, r := range []io.Reader{strings.NewReader(c.in), iotest.OneByteReader(strings.NewReader(c.in))} {
				got, err := frames(t, r, max)
				if (err != nil) != c.err {
					t.Fatalf("err = %v", err)
				}
				if c.err {
					continue
				}
				if len(got) != len(c.want) {
					t.Fatalf("got %+v, want %+v", got, c.want)
				}
				for i := range got {
					if got[i] != c.want[i] {
						t.Errorf("frame %d = %+v, want %+v", i, got[i], c.want[i])
					}
				}
			}
		})
	}
}

// A big line longer than the bufio buffer is cut, and the stream stays in step.
func TestFramingHugeLine(t *testing.T) {
	huge := "<13>" + strings.Repeat("y", 200<<10)
	got, err := frames(t, strings.NewReader(huge+"\n<14>ok\n"), 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0].data) != 64<<10 || got[0].size != len(huge) || got[1].data != "<14>ok" {
		t.Fatalf("got %d frames: sizes %d/%d, second %q", len(got), len(got[0].data), got[0].size, got[len(got)-1].data)
	}
}
