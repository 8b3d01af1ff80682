package syslogd

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/cortexhq/cortex/ingest"
)

// TestThroughputWhileIndexing measures the receiver's sustained rate while
// `cortex index` of a large corpus runs into the same store (both share
// the one writer). It runs only when CORTEX_SYSLOG_BENCH_CORPUS names a
// transcript folder (e.g. one made by `cortex bench generate`):
//
//	CORTEX_SYSLOG_BENCH_CORPUS=/tmp/corpus200 go test ./syslogd -run Throughput -v
//
// Two phases, each on a fresh store with its own index run: 200k UDP
// datagrams sent as fast as one client can (open loop: shows capacity and
// counted drops), then 300k at DocumentedRate (must lose nothing).
func TestThroughputWhileIndexing(t *testing.T) {
	corpus := os.Getenv("CORTEX_SYSLOG_BENCH_CORPUS")
	if corpus == "" {
		t.Skip("set CORTEX_SYSLOG_BENCH_CORPUS to a transcript folder")
	}
	for _, rate := range []int{0, DocumentedRate} {
		n := 200000
		if rate > 0 {
			n = 300000 // 20 s: the queue cannot hide a rate the writer does not sustain
		}
		name := "open-loop"
		if rate > 0 {
			name = fmt.Sprintf("paced-%d", rate)
		}
		t.Run(name, func(t *testing.T) {
			db := openDB(t)
			r := start(t, db, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			indexDone := make(chan ingest.Summary, 1)
			go func() {
				sum, err := ingest.Index(ctx, db, ingest.Options{Paths: []string{corpus}, Hostname: "benchhost"})
				if err != nil {
					t.Errorf("index: %v", err)
				}
				indexDone <- sum
			}()
			time.Sleep(time.Second) // the index is under way
			c, err := net.Dial("udp", r.udp)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			msg := func(i int) string {
				return fmt.Sprintf("<11>1 2026-03-10T12:00:00.000Z benchhost app 42 - - message %d: upstream timed out while reading response header from upstream", i)
			}
			if rate > 0 {
				paced(t, c, n, rate, msg)
			} else {
				for i := 0; i < n; i++ {
					c.Write([]byte(msg(i)))
				}
			}
			sent := time.Since(start)
			waitFor(t, 5*time.Minute, "settled", func() bool {
				st := r.srv.Stats()
				return st.UDP.Received+st.UDP.KernelDrops >= int64(n) && settled(st) || time.Since(start) > 4*time.Minute
			})
			took := time.Since(start)
			indexing := "index still running"
			finished := false
			select {
			case sum := <-indexDone:
				indexing = fmt.Sprintf("index finished first (%d rows, %.0f rows/s)", sum.Inserted, sum.RowsPerS)
				finished = true
			default:
			}
			r.stop()
			u := r.srv.Stats().UDP
			t.Logf("%s: sent %d in %s (%.0f msg/s); stored %d in %s = %.0f msg/s; dropped %d (queue) + %d (kernel); queue peak %d; %s",
				name, n, sent.Round(time.Millisecond), float64(n)/sent.Seconds(), u.Stored, took.Round(time.Millisecond),
				float64(u.Stored)/took.Seconds(), u.Dropped, u.KernelDrops, r.srv.Stats().QueuePeak, indexing)
			cancel()
			if !finished {
				<-indexDone
			}
		})
	}
}
