//go:build !unix

package bench

// PeakRSSMB is the process's peak resident set size in MB; this platform
// offers no getrusage, so it reports 0 ("not measured").
func PeakRSSMB() float64 { return 0 }
