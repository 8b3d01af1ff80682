// Package rawcodec compresses the original JSON of transcript records for
// storage (logs.raw) and restores it. Records are zstd frames; values that
// do not shrink are stored as-is, and Decode recognizes both by the zstd
// magic number (JSON never starts with it).
package rawcodec

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

var magic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Codec encodes and decodes stored raw records. It is safe for concurrent
// use.
type Codec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// New returns a Codec tuned for fast ingest.
func New() (*Codec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true), zstd.WithZeroFrames(true))
	if err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(256<<20))
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	return &Codec{enc: enc, dec: dec}, nil
}

// Encode compresses src, appending to dst[:0]. Small or incompressible
// values are returned uncompressed.
func (c *Codec) Encode(dst, src []byte) []byte {
	if len(src) < 128 {
		return append(dst[:0], src...)
	}
	out := c.enc.EncodeAll(src, dst[:0])
	if len(out) >= len(src) {
		return append(out[:0], src...)
	}
	return out
}

// Decode restores a stored value.
func (c *Codec) Decode(src []byte) ([]byte, error) {
	if !bytes.HasPrefix(src, magic) {
		return src, nil
	}
	out, err := c.dec.DecodeAll(src, nil)
	if err != nil {
		return nil, fmt.Errorf("decompress raw record: %w", err)
	}
	return out, nil
}
