//go:build !unix

package bench

import "time"

// PeakRSSMB is the process's peak resident set size in MB; this platform
// offers no getrusage, so it reports 0 ("not measured").
func PeakRSSMB() float64 { return 0 }

// CPUTime is the CPU time this process has used; 0 where the platform does
// not report it.
func CPUTime() time.Duration { return 0 }
