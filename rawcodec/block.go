package rawcodec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Records of one transcript file repeat each other (the same keys, ids,
// paths and often the same text), so they compress far better together
// than one by one: a block is the consecutive records of one file's write
// compressed as one zstd frame, and each record's stored value becomes a
// reference (block id, position) instead of its own frame.
//
// A block's decoded form is: uvarint count, count uvarint lengths, then
// the records' bytes back to back.

// refMagic starts a reference to a record in a block. 0xff never starts
// UTF-8 text (JSON) nor a zstd frame, so Decode and ParseRef tell the
// three stored forms apart.
var refMagic = []byte{0xff, 'r', 'b'}

// MaxBlockBytes bounds the decoded size of one block: reading one record
// decodes its whole block.
const MaxBlockBytes = 1 << 20

// maxBlockRecords bounds a block's record count (a corrupt count must not
// make the decoder allocate without limit).
const maxBlockRecords = 1 << 20

// ErrCorruptBlock is wrapped by the errors of DecodeBlock.
var ErrCorruptBlock = errors.New("corrupt raw block")

// EncodeBlock compresses recs as one block, appending to dst[:0]. A
// goroutine that compresses many blocks uses a BlockEncoder instead.
func (c *Codec) EncodeBlock(dst []byte, recs [][]byte) []byte {
	return c.blockEnc.EncodeAll(appendPlain(nil, recs), dst[:0])
}

// appendPlain appends the decoded form of a block of recs to dst.
func appendPlain(dst []byte, recs [][]byte) []byte {
	n := binary.MaxVarintLen64 * (len(recs) + 1)
	for _, r := range recs {
		n += len(r)
	}
	dst = slices.Grow(dst, n)
	dst = binary.AppendUvarint(dst, uint64(len(recs)))
	for _, r := range recs {
		dst = binary.AppendUvarint(dst, uint64(len(r)))
	}
	for _, r := range recs {
		dst = append(dst, r...)
	}
	return dst
}

// A BlockEncoder compresses blocks like Codec.EncodeBlock in buffers it
// keeps, so a block costs the heap only the frame it returns: the encoder
// sizes its output for the whole input, eight times what a block of
// transcript records compresses to. It is not safe for concurrent use.
type BlockEncoder struct {
	c          *Codec
	plain, out []byte
}

// NewBlockEncoder returns a BlockEncoder using c's block encoder.
func (c *Codec) NewBlockEncoder() *BlockEncoder { return &BlockEncoder{c: c} }

// Encode compresses recs as one block, appending to dst[:0].
func (e *BlockEncoder) Encode(dst []byte, recs [][]byte) []byte {
	plain := appendPlain(e.plain[:0], recs)
	out := e.c.blockEnc.EncodeAll(plain, e.out[:0])
	dst = append(dst[:0], out...)
	if cap(plain) <= maxKeptBytes && cap(out) <= maxKeptBytes {
		e.plain, e.out = plain, out
	}
	return dst
}

// maxKeptBytes bounds the buffers a BlockEncoder keeps (a block holds one
// oversized record when that record alone exceeds MaxBlockBytes).
const maxKeptBytes = 2 * MaxBlockBytes

// DecodeBlock restores the records of a block. The records alias one
// buffer; callers must not change them.
func (c *Codec) DecodeBlock(src []byte) ([][]byte, error) {
	if !bytes.HasPrefix(src, magic) {
		return nil, fmt.Errorf("%w: not a zstd frame", ErrCorruptBlock)
	}
	plain, err := c.dec.DecodeAll(src, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptBlock, err)
	}
	count, k := binary.Uvarint(plain)
	if k <= 0 || count > maxBlockRecords || count > uint64(len(plain)) {
		return nil, fmt.Errorf("%w: bad record count", ErrCorruptBlock)
	}
	p := k
	lens := make([]uint64, count)
	var total uint64
	for i := range lens {
		l, k := binary.Uvarint(plain[p:])
		if k <= 0 {
			return nil, fmt.Errorf("%w: bad length of record %d", ErrCorruptBlock, i)
		}
		p += k
		lens[i] = l
		total += l
		if total > uint64(len(plain)) {
			return nil, fmt.Errorf("%w: records overrun the block", ErrCorruptBlock)
		}
	}
	if total != uint64(len(plain)-p) {
		return nil, fmt.Errorf("%w: %d bytes of records, %d in the block", ErrCorruptBlock, total, len(plain)-p)
	}
	out := make([][]byte, count)
	for i, l := range lens {
		out[i] = plain[p : p+int(l) : p+int(l)]
		p += int(l)
	}
	return out, nil
}

// AppendRef appends the stored value of the record at index i of block
// id.
func AppendRef(dst []byte, id int64, i int) []byte {
	dst = append(dst, refMagic...)
	dst = binary.AppendUvarint(dst, uint64(id))
	return binary.AppendUvarint(dst, uint64(i))
}

// ParseRef reads a stored value written by AppendRef; ok is false for the
// other stored forms (a zstd frame, plain JSON).
func ParseRef(src []byte) (id int64, i int, ok bool) {
	rest, found := bytes.CutPrefix(src, refMagic)
	if !found {
		return 0, 0, false
	}
	b, k := binary.Uvarint(rest)
	if k <= 0 || b > 1<<62 {
		return 0, 0, false
	}
	x, k2 := binary.Uvarint(rest[k:])
	if k2 <= 0 || k+k2 != len(rest) || x > maxBlockRecords {
		return 0, 0, false
	}
	return int64(b), int(x), true
}

// IsRef reports whether a stored value is a reference into a block (a
// malformed one included, which Decode must not mistake for a record).
func IsRef(src []byte) bool { return bytes.HasPrefix(src, refMagic) }
