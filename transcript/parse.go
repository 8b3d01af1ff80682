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
