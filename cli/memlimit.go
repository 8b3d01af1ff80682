package cli

import (
	"os"
	"runtime/debug"
)

// ingestMemoryLimit is the Go heap's soft limit while a command ingests
// (index, watch, bench ingest), unless GOMEMLIMIT is set. Ingest's live
// heap is small (~50 MB) and its garbage large: under the 160 MiB limit
// the queries are tuned for (cmd/cortex), indexing the 1 GB corpus peaked
// at 328-335 MB RSS; at 112 MiB, 287 MB for the same CPU
// (docs/performance.md).
const ingestMemoryLimit = 112 << 20

// limitMemoryForIngest lowers the soft memory limit to ingestMemoryLimit
// when the environment does not set one.
func limitMemoryForIngest() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(ingestMemoryLimit)
	}
}
