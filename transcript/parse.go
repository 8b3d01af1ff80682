package transcript

import (
	"bytes"
	"errors"
	"fmt"
)

// RecordParser parses single JSONL records of one file, in order.
type RecordParser interface {
	Parse(raw []byte, line int64) Result
}

// ParseLine parses one physical JSONL line. A line may hold several records
// written back to back ("…}{…"); each becomes its own Result. complete says
// whether the line ended with a newline: an unterminated line that is not
// valid JSON yields a single Result with Err = ErrTruncated, meaning "wait
// for the writer to finish it".
func ParseLine(p RecordParser, line []byte, no int64, complete bool) []Result {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	r := p.Parse(line, no)
	if r.Err == nil {
		return []Result{r}
	}
	parts, err := SplitConcatenated(line)
	if err != nil {
		if errors.Is(err, ErrTruncated) && !complete {
			return []Result{{Raw: line, Line: no, Err: ErrTruncated}}
		}
		if !complete && line[0] == '{' {
			return []Result{{Raw: line, Line: no, Err: ErrTruncated}}
		}
		if k := appendedRecord(line); k > 0 {
			// A record cut short by a crash, then a record the restarted
			// writer appended to the same line: the cut one is an error,
			// the appended ones are kept.
			head := Result{Raw: line[:k], Line: no,
				Err: fmt.Errorf("record cut short (the writer stopped mid-record), followed on the same line by the next record: %w", r.Err)}
			return append([]Result{head}, ParseLine(p, line[k:], no, complete)...)
		}
		return []Result{r}
	}
	if len(parts) == 1 {
		return []Result{r}
	}
	out := make([]Result, 0, len(parts))
	for i, part := range parts {
		pr := p.Parse(part, no)
		if pr.Err != nil {
			pr.Err = fmt.Errorf("record %d of %d on the line: %w", i+1, len(parts), pr.Err)
		}
		out = append(out, pr)
	}
	return out
}

// maxRecoveryTries bounds the record starts appendedRecord tries on one
// line (each try validates the rest of the line).
const maxRecoveryTries = 64

// appendedRecord finds where a record appended after a cut-short one
// starts, on a complete line that is not valid JSON: the first `{"` from
// which the rest of the line is one or more complete JSON objects. Inside a
// JSON string a quote is escaped, so a raw `{"` is always an object's
// start; one after ':', ',' or '[' may be a value nested in the cut record
// (a cut right after its closing brace would leave it complete) and is not
// taken. It returns 0 when there is none.
func appendedRecord(line []byte) int {
	tries := 0
	for k := 1; k < len(line)-1 && tries < maxRecoveryTries; k++ {
		if line[k] != '{' || line[k+1] != '"' {
			continue
		}
		if prev := prevNonSpace(line, k); prev == ':' || prev == ',' || prev == '[' {
			continue
		}
		tries++
		if parts, err := SplitConcatenated(line[k:]); err == nil && len(parts) > 0 {
			return k
		}
	}
	return 0
}

func prevNonSpace(b []byte, i int) byte {
	for i--; i >= 0; i-- {
		if c := b[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c
		}
	}
	return 0
}
