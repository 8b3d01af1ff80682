package gen

import (
	"bufio"
	"fmt"
)

// copyParams are the copy-specific inputs of a rewrite.
type copyParams struct {
	seed  int64
	k     int   // copy index
	delta int64 // seconds added to every timestamp of the unit
}

// writePatched writes src to w with every patch re-rendered for cp. Bytes
// outside the patches are copied verbatim, so line structure, missing
// trailing newlines and joined "}{" records are preserved exactly.
func writePatched(w *bufio.Writer, src []byte, ps []patch, cp copyParams) error {
	var scratch [uuidLen]byte
	last := 0
	for i := range ps {
		p := &ps[i]
		off := int(p.off)
		if _, err := w.Write(src[last:off]); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if _, err := w.Write(renderPatch(scratch[:0], p, src[off:off+p.size()], cp)); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		last = off + p.size()
	}
	if _, err := w.Write(src[last:]); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// renderPatch appends the copy-specific replacement of orig (the bytes the
// patch covers) to dst. The replacement always has len(orig) bytes.
func renderPatch(dst []byte, p *patch, orig []byte, cp copyParams) []byte {
	switch p.kind {
	case kindUUID:
		hi, lo := mapUUID(cp.seed, cp.k, p.a, p.b)
		return appendUUID(dst, hi, lo, p.flags&flagUpper != 0)
	case kindTime:
		return appendWall(dst, int64(p.a)+cp.delta, orig)
	case kindID:
		return appendIDTail(dst, orig, hash4(saltID, cp.seed, cp.k, p.a), p.flags&flagHex != 0)
	case kindAgent:
		return appendAgentID(dst, orig, hash4(saltAgent, cp.seed, cp.k, p.a))
	}
	return append(dst, orig...)
}

// mapUUID derives the replacement of UUID (hi, lo) for copy k. Equal inputs
// give equal outputs; the result keeps the original's version when it is 7
// (time-ordered ids stay v7-shaped) and is version 4 otherwise, with the RFC
// 4122 variant bits set.
func mapUUID(seed int64, k int, hi, lo uint64) (uint64, uint64) {
	nhi := mix64(hash4(saltUUIDHi, seed, k, hi) ^ lo)
	nlo := mix64(hash4(saltUUIDLo, seed, k, lo) ^ hi)
	ver := uint64(4)
	if (hi>>12)&0xf == 7 {
		ver = 7
	}
	nhi = nhi&^(0xf<<12) | ver<<12
	nlo = nlo&^(0xc0<<56) | 0x80<<56
	return nhi, nlo
}

// appendUUID formats a UUID in canonical 8-4-4-4-12 form.
func appendUUID(dst []byte, hi, lo uint64, upper bool) []byte {
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	for i := 0; i < 32; i++ {
		if i == 8 || i == 12 || i == 16 || i == 20 {
			dst = append(dst, '-')
		}
		w := hi
		if i >= 16 {
			w = lo
		}
		shift := uint(60 - 4*(i%16))
		dst = append(dst, digits[(w>>shift)&0xf])
	}
	return dst
}

// uuidString formats a UUID in lower case.
func uuidString(hi, lo uint64) string {
	var b [uuidLen]byte
	return string(appendUUID(b[:0], hi, lo, false))
}

// appendWall formats wall-clock seconds as "YYYY-MM-DDTHH:MM:SS". If the
// shifted year does not fit in four digits the original bytes are kept.
func appendWall(dst []byte, wall int64, orig []byte) []byte {
	days := wall / 86400
	secs := wall % 86400
	if secs < 0 {
		secs += 86400
		days--
	}
	y, m, d := civilFromDays(days)
	if y < 0 || y > 9999 {
		return append(dst, orig...)
	}
	dst = appendInt(dst, y, 4)
	dst = append(dst, '-')
	dst = appendInt(dst, m, 2)
	dst = append(dst, '-')
	dst = appendInt(dst, d, 2)
	dst = append(dst, 'T')
	dst = appendInt(dst, int(secs/3600), 2)
	dst = append(dst, ':')
	dst = appendInt(dst, int(secs/60%60), 2)
	dst = append(dst, ':')
	return appendInt(dst, int(secs%60), 2)
}

// appendInt appends v zero-padded to width digits.
func appendInt(dst []byte, v, width int) []byte {
	var b [8]byte
	for i := width - 1; i >= 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return append(dst, b[:width]...)
}

// appendIDTail replaces each character of orig by a pseudo-random one of the
// same class (digit, lower, upper; or lower-case hex when hex is set).
func appendIDTail(dst, orig []byte, h uint64, hex bool) []byte {
	for i, c := range orig {
		r := mix64(h + uint64(i))
		switch {
		case hex:
			c = "0123456789abcdef"[r&0xf]
		case isDigit(c):
			c = byte('0' + r%10)
		case 'a' <= c && c <= 'z':
			c = byte('a' + r%26)
		case 'A' <= c && c <= 'Z':
			c = byte('A' + r%26)
		}
		dst = append(dst, c)
	}
	return dst
}

// appendAgentID keeps the first character of a subagent id (Claude's ids
// start with "a") and replaces the rest with hex derived from h.
func appendAgentID(dst, orig []byte, h uint64) []byte {
	if len(orig) == 0 {
		return dst
	}
	dst = append(dst, orig[0])
	for i := 1; i < len(orig); i++ {
		r := mix64(h + uint64(i))
		dst = append(dst, "0123456789abcdef"[r&0xf])
	}
	return dst
}

// agentName returns the copy-k replacement of subagent id id, exactly as the
// kindAgent patches render it inside the transcripts.
func agentName(seed int64, k int, id string) string {
	b := []byte(id)
	return string(appendAgentID(nil, b, hash4(saltAgent, seed, k, fnv64(b))))
}
