package rawcodec

import (
	"bytes"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	cases := []string{
		"",
		`{"type":"user"}`,
		`{"type":"assistant","message":{"content":"` + strings.Repeat("hello world ", 500) + `"}}`,
		string([]byte{0x28, 0xb5, 0x2f}), // looks almost like the magic
	}
	for _, in := range cases {
		enc := c.Encode(nil, []byte(in))
		if len(in) > 1000 && len(enc) >= len(in) {
			t.Errorf("compressible input of %d bytes stored as %d bytes", len(in), len(enc))
		}
		out, err := c.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, []byte(in)) {
			t.Errorf("round trip changed %q", in[:min(len(in), 40)])
		}
	}
}

func TestDecodeRejectsCorruptFrame(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decode(append([]byte{0x28, 0xb5, 0x2f, 0xfd}, 1, 2, 3)); err == nil {
		t.Fatal("corrupt frame decoded without error")
	}
}
