//go:build !unix

package bench

import "time"

// CPUTime is the CPU time this process has used; 0 where the platform does
// not report it.
func CPUTime() time.Duration { return 0 }
