package sqlite

import (
	"time"

	"github.com/cortexhq/cortex"
)

// parseStoredTime parses a stored TimeLayout timestamp; zero on failure.
func parseStoredTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := cortex.ParseTimestamp(s)
	if err != nil {
		return time.Time{}
	}
	return t
}
