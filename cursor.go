package cortex

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Cursor is the position after the last item of a page of a listing: the
// listing's sort key (a time and a numeric or text tiebreaker) for lists
// read from the store in that order, so rows added meanwhile neither
// repeat nor shift a page, or an offset for lists computed whole (incident
// rankings, relevance-ranked search). Callers see it only encoded, as the
// opaque `next` of a result and the `cursor` parameter of the next call.
type Cursor struct {
	Time   string `json:"t,omitempty"`
	ID     int64  `json:"i,omitempty"`
	Key    string `json:"k,omitempty"`
	Offset int    `json:"o,omitempty"`
}

// Encode returns the cursor's opaque text.
func (c Cursor) Encode() string {
	b, err := json.Marshal(c)
	if err != nil { // a struct of strings and integers always encodes
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses a cursor given by a caller ("" is the first page:
// nil). A cursor that was not made by Encode is an invalid-argument error.
func DecodeCursor(s string) (*Cursor, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c Cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Offset < 0 {
		return nil, Errorf(CodeInvalid, "cursor %q is not a cursor of this listing (pass the next of the previous page as it is)",
			CutUTF8(s, 40))
	}
	return &c, nil
}

// OffsetOf is the offset a cursor starts at (0 for the first page).
func (c *Cursor) OffsetOf() int {
	if c == nil {
		return 0
	}
	return c.Offset
}

// Page cuts the page that starts at the cursor's offset out of a list
// computed whole: the page, and the cursor of the next page ("" when this
// is the last).
func Page[T any](all []T, c *Cursor, limit int) ([]T, string) {
	off := min(c.OffsetOf(), len(all))
	end := min(off+limit, len(all))
	next := ""
	if end < len(all) {
		next = Cursor{Offset: end}.Encode()
	}
	return all[off:end], next
}
