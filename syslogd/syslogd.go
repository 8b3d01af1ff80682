// Package syslogd is Cortex's syslog receiver: it listens on UDP (one
// message per datagram, RFC 5426) and TCP (octet-counted or LF-framed
// messages, RFC 6587, detected per message), parses RFC 5424 and RFC 3164
// messages with go-syslog, and stores them as non-AI log rows (ai_tool
// NULL) through the store's one writer, so that incident evidence bundles
// show them as nearby_logs / nearby_errors.
//
// Flow control: listeners put messages on one bounded queue. When it is
// full a UDP message is dropped and counted (a UDP sender cannot be slowed
// down); a TCP connection stops reading for up to Options.TCPWait (the
// sender's socket buffer fills, which slows it down) and only then drops
// and counts. Parser goroutines turn queued messages into rows (redacted,
// raw original compressed), batched by Options.BatchSize or
// Options.FlushInterval, whichever comes first; one writer goroutine
// commits batches together with the receiver's counters. Malformed
// messages are stored whole with a parse-error note, oversized ones cut to
// Options.MaxMessageBytes and marked. Nothing is lost silently: every
// message is counted as stored or dropped, and the counters land in the
// store (`cortex status`) while the receiver runs.
package syslogd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/redact"
	"github.com/cortexhq/cortex/sqlite"
)

// Defaults of Options.
const (
	// DefaultAddr is the default UDP and TCP listen address: loopback
	// only, an unprivileged port.
	DefaultAddr            = "127.0.0.1:1514"
	DefaultQueueSize       = 65536
	DefaultBatchSize       = 1000
	DefaultFlushInterval   = 200 * time.Millisecond
	DefaultMaxMessageBytes = 64 << 10
	DefaultMaxConns        = 256
	DefaultIdleTimeout     = 10 * time.Minute
	DefaultTCPWait         = 2 * time.Second
	DefaultCounterInterval = time.Second
	DefaultReadBuffer      = 8 << 20
	// DocumentedRate is the message rate (per second, UDP and TCP
	// together) the receiver is documented to store without loss, measured
	// on a 2-CPU machine while `cortex index` runs into the same store
	// (docs/logs.md). Above it the queue absorbs bursts of up to QueueSize
	// messages; beyond that messages are dropped and counted.
	DocumentedRate = 15000
	// maxTxRows bounds the rows of one write transaction (the writer merges
	// queued batches up to it).
	maxTxRows = 8192
	// warnEvery rate-limits the dropped-messages warning.
	warnEvery = 10 * time.Second
)

// Store is what the receiver needs from the database.
type Store interface {
	InsertLogs(ctx context.Context, rows []sqlite.LogRow, counters []cortex.LogIngestCounters) (int64, error)
}

// searchKicker is a store that indexes new rows for search in the
// background when told rows were stored.
type searchKicker interface{ KickSearch() }

// Options configures the receiver.
type Options struct {
	// UDP and TCP are listen addresses ("" disables that transport; at
	// least one is needed). Port 0 picks a free port (see Ready).
	UDP string
	TCP string
	// Hostname is stored on messages without a HOSTNAME field that arrive
	// over loopback (local senders); other messages without one get the
	// sender's IP address. Default: "localhost".
	Hostname string
	// QueueSize bounds the messages waiting to be parsed and stored.
	QueueSize int
	// BatchSize and FlushInterval bound a parser's batch: it is handed to
	// the writer when full or this long after its first message.
	BatchSize     int
	FlushInterval time.Duration
	// MaxMessageBytes cuts longer messages (they are stored cut, marked
	// truncated, and counted as oversized).
	MaxMessageBytes int
	// MaxConns bounds concurrent TCP connections; IdleTimeout closes a
	// connection that sent nothing for that long.
	MaxConns    int
	IdleTimeout time.Duration
	// TCPWait is how long a TCP connection waits for room in a full queue
	// before its message is dropped.
	TCPWait time.Duration
	// Parsers is the number of parser goroutines (default: half the CPUs,
	// 1 to 4).
	Parsers int
	// ReadBuffer is the UDP socket receive buffer requested from the
	// kernel (capped by net.core.rmem_max).
	ReadBuffer int
	// CounterInterval is how often counters are stored when no rows are,
	// and kernel drops are read.
	CounterInterval time.Duration
	// Location is the time zone of RFC 3164 stamps (default: local time).
	Location *time.Location
	Redactor *redact.Redactor
	Codec    *rawcodec.Codec
	Logger   *slog.Logger
	Now      func() time.Time
	// Ready, when set, is called with the bound addresses once listening
	// (nil for a disabled transport).
	Ready func(udp, tcp net.Addr)
}

func (o *Options) defaults() error {
	if o.UDP == "" && o.TCP == "" {
		return cortex.Errorf(cortex.CodeInvalid, "syslog: no UDP or TCP listen address")
	}
	if o.Hostname == "" {
		o.Hostname = "localhost"
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.TCPWait <= 0 {
		o.TCPWait = DefaultTCPWait
	}
	if o.Parsers <= 0 {
		o.Parsers = min(4, max(1, runtime.NumCPU()/2))
	}
	if o.ReadBuffer <= 0 {
		o.ReadBuffer = DefaultReadBuffer
	}
	if o.CounterInterval <= 0 {
		o.CounterInterval = DefaultCounterInterval
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Redactor == nil {
		o.Redactor = redact.New()
	}
	if o.Codec == nil {
		c, err := rawcodec.New()
		if err != nil {
			return fmt.Errorf("syslog: %w", err)
		}
		o.Codec = c
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Transports, indexes of the per-transport counters.
const (
	udp = iota
	tcp
	nTransports
)

var transportSource = [nTransports]string{sqlite.CounterSyslogUDP, sqlite.CounterSyslogTCP}

// counters are one transport's live counters.
type counters struct {
	received, stored, dropped, malformed, oversized, kernelDrops atomic.Int64
}

func (c *counters) snapshot(source string) cortex.LogIngestCounters {
	return cortex.LogIngestCounters{Source: source, Received: c.received.Load(), Stored: c.stored.Load(),
		Dropped: c.dropped.Load(), Malformed: c.malformed.Load(), Oversized: c.oversized.Load(),
		KernelDrops: c.kernelDrops.Load()}
}

// Stats is a snapshot of a running receiver, counted since it started.
type Stats struct {
	UDP cortex.LogIngestCounters `json:"udp"`
	TCP cortex.LogIngestCounters `json:"tcp"`
	// Queued messages wait to be parsed and stored; QueueSize bounds them.
	Queued    int `json:"queued"`
	QueueSize int `json:"queue_size"`
	// QueuePeak is the most messages seen queued (sampled by the writer).
	QueuePeak int64 `json:"queue_peak"`
	Conns     int64 `json:"tcp_connections"`
	// Transactions counts write transactions; WriteErrors those that
	// failed (their rows are counted as dropped).
	Transactions int64 `json:"transactions"`
	WriteErrors  int64 `json:"write_errors"`
}

// Total sums the transports' counters.
func (s Stats) Total() cortex.LogIngestCounters {
	t := s.UDP
	t.Add(s.TCP)
	t.Source = "syslog"
	return t
}

// frame is one received message on its way to a parser.
type frame struct {
	data      []byte
	size      int // bytes on the wire (> len(data) when cut)
	peer      netip.Addr
	transport int
	at        time.Time
}

// rowBatch is a parser's batch for the writer, with its rows per transport.
type rowBatch struct {
	rows []sqlite.LogRow
	n    [nTransports]int64
}

// Server is a syslog receiver. Create it with New, then call Run once.
type Server struct {
	store Store
	opts  Options
	queue chan frame
	c     [nTransports]counters

	conns        atomic.Int64
	queuePeak    atomic.Int64
	transactions atomic.Int64
	writeErrors  atomic.Int64

	mu     sync.Mutex
	udpLn  *net.UDPConn
	tcpLn  net.Listener
	active map[net.Conn]struct{}
}

// New returns a receiver storing into store. It does not listen yet.
func New(store Store, opts Options) (*Server, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	return &Server{store: store, opts: opts, queue: make(chan frame, opts.QueueSize), active: map[net.Conn]struct{}{}}, nil
}

// Run listens and receives until ctx ends, then stops the listeners,
// stores what was queued and the final counters, and returns. It fails
// when an address cannot be bound.
func Run(ctx context.Context, store Store, opts Options) error {
	s, err := New(store, opts)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}

// Stats returns the receiver's counters since it started.
func (s *Server) Stats() Stats {
	return Stats{UDP: s.c[udp].snapshot(transportSource[udp]), TCP: s.c[tcp].snapshot(transportSource[tcp]),
		Queued: len(s.queue), QueueSize: cap(s.queue), QueuePeak: s.queuePeak.Load(), Conns: s.conns.Load(),
		Transactions: s.transactions.Load(), WriteErrors: s.writeErrors.Load()}
}

// Run listens and receives until ctx ends (see the package function Run).
// It may be called once.
func (s *Server) Run(ctx context.Context) error {
	if err := s.listen(ctx); err != nil {
		return err
	}
	var udpAddr, tcpAddr net.Addr
	if s.udpLn != nil {
		udpAddr = s.udpLn.LocalAddr()
	}
	if s.tcpLn != nil {
		tcpAddr = s.tcpLn.Addr()
	}
	s.opts.Logger.Info("syslog receiver listening", "udp", udpAddr, "tcp", tcpAddr)
	if s.opts.Ready != nil {
		s.opts.Ready(udpAddr, tcpAddr)
	}

	// Stages: readers → queue → parsers → batches → writer.
	batches := make(chan rowBatch, 2*s.opts.Parsers)
	var parsers sync.WaitGroup
	for i := 0; i < s.opts.Parsers; i++ {
		parsers.Add(1)
		go func() {
			defer parsers.Done()
			s.parse(batches)
		}()
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		s.write(ctx, batches)
	}()

	var readers sync.WaitGroup
	if s.udpLn != nil {
		readers.Add(1)
		go func() {
			defer readers.Done()
			s.readUDP(s.udpLn)
		}()
	}
	if s.tcpLn != nil {
		readers.Add(1)
		go func() {
			defer readers.Done()
			s.acceptTCP(ctx, s.tcpLn, &readers)
		}()
	}

	<-ctx.Done()
	s.closeListeners()
	readers.Wait()
	close(s.queue)
	parsers.Wait()
	close(batches)
	<-writerDone
	st := s.Stats().Total()
	s.opts.Logger.Info("syslog receiver stopped", "received", st.Received, "stored", st.Stored, "dropped", st.Dropped,
		"malformed", st.Malformed)
	return nil
}

// listen binds the configured addresses.
func (s *Server) listen(ctx context.Context) error {
	var lc net.ListenConfig
	if s.opts.UDP != "" {
		pc, err := lc.ListenPacket(ctx, "udp", s.opts.UDP)
		if err != nil {
			return cortex.WrapError(cortex.CodeUnavailable, err, "syslog: cannot listen on udp %s: %v", s.opts.UDP, err)
		}
		conn := pc.(*net.UDPConn)
		if err := conn.SetReadBuffer(s.opts.ReadBuffer); err != nil {
			s.opts.Logger.Warn("syslog: cannot set the UDP receive buffer", "err", err)
		}
		s.udpLn = conn
	}
	if s.opts.TCP != "" {
		ln, err := lc.Listen(ctx, "tcp", s.opts.TCP)
		if err != nil {
			if s.udpLn != nil {
				s.udpLn.Close()
			}
			return cortex.WrapError(cortex.CodeUnavailable, err, "syslog: cannot listen on tcp %s: %v", s.opts.TCP, err)
		}
		s.tcpLn = ln
	}
	return nil
}

// closeListeners stops accepting and reading: listeners and open TCP
// connections are closed (messages already read stay queued).
func (s *Server) closeListeners() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.udpLn != nil {
		s.udpLn.Close()
	}
	if s.tcpLn != nil {
		s.tcpLn.Close()
	}
	for c := range s.active {
		c.Close()
	}
	s.active = nil
}

// readUDP reads datagrams until the socket is closed.
func (s *Server) readUDP(conn *net.UDPConn) {
	// One byte more than the limit tells a cut datagram from one that fits.
	buf := make([]byte, max(s.opts.MaxMessageBytes+1, 64<<10))
	for {
		n, addr, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.opts.Logger.Warn("syslog: udp read failed", "err", err)
			continue
		}
		data := buf[:n]
		for len(data) > 0 && (data[len(data)-1] == '\n' || data[len(data)-1] == '\r' || data[len(data)-1] == 0) {
			data = data[:len(data)-1]
		}
		if len(data) == 0 {
			continue
		}
		size := len(data)
		if size > s.opts.MaxMessageBytes {
			data = data[:s.opts.MaxMessageBytes]
		}
		s.c[udp].received.Add(1)
		f := frame{data: append([]byte(nil), data...), size: size, peer: addr.Addr().Unmap(), transport: udp, at: s.opts.Now()}
		select {
		case s.queue <- f:
		default:
			s.c[udp].dropped.Add(1)
		}
	}
}

// acceptTCP accepts connections until the listener is closed.
func (s *Server) acceptTCP(ctx context.Context, ln net.Listener, wg *sync.WaitGroup) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.opts.Logger.Warn("syslog: tcp accept failed", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if !s.track(conn) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.untrack(conn)
			s.readTCP(ctx, conn)
		}()
	}
}

// track registers a connection; it refuses (closes) it over MaxConns or
// after shutdown began.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil || len(s.active) >= s.opts.MaxConns {
		s.opts.Logger.Warn("syslog: tcp connection refused (too many connections)", "peer", c.RemoteAddr(), "max", s.opts.MaxConns)
		c.Close()
		return false
	}
	s.active[c] = struct{}{}
	s.conns.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	c.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != nil {
		delete(s.active, c)
	}
	s.conns.Add(-1)
}

// readTCP reads one connection's messages until it ends.
func (s *Server) readTCP(ctx context.Context, conn net.Conn) {
	var peer netip.Addr
	if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil {
		peer = ap.Addr().Unmap()
	}
	fr := newFrameReader(conn, s.opts.MaxMessageBytes)
	var timer *time.Timer
	for {
		_ = conn.SetReadDeadline(time.Now().Add(s.opts.IdleTimeout))
		data, size, err := fr.next()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
				s.opts.Logger.Debug("syslog: tcp connection ended", "peer", conn.RemoteAddr(), "err", err)
			}
			return
		}
		s.c[tcp].received.Add(1)
		f := frame{data: append([]byte(nil), data...), size: size, peer: peer, transport: tcp, at: s.opts.Now()}
		select {
		case s.queue <- f:
			continue
		default:
		}
		// Full: stop reading (back-pressure on the sender) for a while.
		if timer == nil {
			timer = time.NewTimer(s.opts.TCPWait)
		} else {
			timer.Reset(s.opts.TCPWait)
		}
		select {
		case s.queue <- f:
		case <-timer.C:
			s.c[tcp].dropped.Add(1)
		case <-ctx.Done():
			s.c[tcp].dropped.Add(1)
			return
		}
		timer.Stop()
	}
}

// parse turns queued frames into rows and hands batches to the writer.
func (s *Server) parse(out chan<- rowBatch) {
	p := NewParser(s.opts.Location)
	var b rowBatch
	var flush <-chan time.Time
	var timer *time.Timer
	send := func() {
		if len(b.rows) > 0 {
			out <- b
		}
		b = rowBatch{rows: make([]sqlite.LogRow, 0, s.opts.BatchSize)}
		flush = nil
	}
	for {
		select {
		case f, ok := <-s.queue:
			if !ok {
				send()
				return
			}
			b.rows = append(b.rows, s.row(p, &f))
			b.n[f.transport]++
			if len(b.rows) >= s.opts.BatchSize {
				if timer != nil {
					timer.Stop()
				}
				send()
			} else if flush == nil {
				if timer == nil {
					timer = time.NewTimer(s.opts.FlushInterval)
				} else {
					timer.Reset(s.opts.FlushInterval)
				}
				flush = timer.C
			}
		case <-flush:
			send()
		}
	}
}

// row turns one received message into a log row.
func (s *Server) row(p *Parser, f *frame) sqlite.LogRow {
	c := &s.c[f.transport]
	raw, _ := s.opts.Redactor.Bytes(f.data)
	m := p.Parse(raw, f.at)
	extra := map[string]string{}
	if f.peer.IsValid() {
		extra["peer"] = f.peer.String()
	}
	if f.size > len(f.data) {
		extra["truncated"] = "true"
		extra["original_bytes"] = strconv.Itoa(f.size)
		c.oversized.Add(1)
	}
	if m.Err != nil {
		c.malformed.Add(1)
	}
	r := sqlite.LogRow{Timestamp: m.Timestamp, ReceivedAt: f.at, Hostname: m.Hostname, Facility: m.Facility,
		Severity: m.Severity, AppName: m.AppName, Message: m.Text, Source: transportSource[f.transport], Malformed: m.Err != nil}
	if r.Timestamp.IsZero() {
		r.Timestamp = f.at
		extra["timestamp_estimated"] = "true"
	}
	if r.Hostname == "" {
		if !f.peer.IsValid() || f.peer.IsLoopback() {
			r.Hostname = s.opts.Hostname
		} else {
			r.Hostname = f.peer.String()
		}
	}
	if r.Severity == "" {
		// No PRI: a level word in the text, else user.notice's severity
		// (RFC 3164 §4.3.3).
		if sev, ok := SeverityFromText(m.Text); ok {
			r.Severity = sev
			extra["severity_from"] = "text"
		} else {
			r.Severity = cortex.SevNotice
		}
	}
	r.Meta = m.Meta(extra)
	r.Raw = s.opts.Codec.Encode(nil, raw)
	return r
}

// write commits batches and counters until batches is closed.
func (s *Server) write(ctx context.Context, batches <-chan rowBatch) {
	// Writes outlive ctx: what was received is stored on shutdown.
	wctx := context.WithoutCancel(ctx)
	w := &writer{s: s, kernel: newKernelDrops(s.udpLn)}
	tick := time.NewTicker(s.opts.CounterInterval)
	defer tick.Stop()
	for {
		if q := int64(len(s.queue)); q > s.queuePeak.Load() {
			s.queuePeak.Store(q)
		}
		select {
		case b, ok := <-batches:
			if !ok {
				w.poll()
				w.commit(wctx, nil)
				return
			}
			group := []rowBatch{b}
			rows := len(b.rows)
		more:
			for rows < maxTxRows {
				select {
				case b, ok := <-batches:
					if !ok {
						break more
					}
					group = append(group, b)
					rows += len(b.rows)
				default:
					break more
				}
			}
			w.commit(wctx, group)
		case <-tick.C:
			w.poll()
			w.commit(wctx, nil)
		}
	}
}

// writer is the state of the writer goroutine.
type writer struct {
	s         *Server
	kernel    *kernelDrops
	persisted [nTransports]cortex.LogIngestCounters
	warned    time.Time
	warnedAt  int64 // dropped total at the last warning
}

// poll reads the kernel's UDP drop count and warns (rate-limited) about
// dropped messages.
func (w *writer) poll() {
	if d := w.kernel.delta(); d > 0 {
		w.s.c[udp].kernelDrops.Add(d)
	}
	now := time.Now()
	if now.Sub(w.warned) < warnEvery {
		return
	}
	var dropped int64
	for i := range w.s.c {
		dropped += w.s.c[i].dropped.Load() + w.s.c[i].kernelDrops.Load()
	}
	if dropped > w.warnedAt {
		w.s.opts.Logger.Warn("syslog: messages dropped (queue full or socket buffer overflow); see `cortex status`",
			"dropped_since_last_warning", dropped-w.warnedAt, "dropped_total", dropped, "queue_size", w.s.opts.QueueSize)
		w.warned, w.warnedAt = now, dropped
	}
}

// commit stores a group of batches (or none) with the counter deltas.
func (w *writer) commit(ctx context.Context, group []rowBatch) {
	var rows []sqlite.LogRow
	var n [nTransports]int64
	for _, b := range group {
		rows = append(rows, b.rows...)
		for i := range n {
			n[i] += b.n[i]
		}
	}
	var deltas []cortex.LogIngestCounters
	var next [nTransports]cortex.LogIngestCounters
	for i := range w.s.c {
		cur := w.s.c[i].snapshot(transportSource[i])
		cur.Stored += n[i]
		next[i] = cur
		d := cur
		d.Received -= w.persisted[i].Received
		d.Stored -= w.persisted[i].Stored
		d.Dropped -= w.persisted[i].Dropped
		d.Malformed -= w.persisted[i].Malformed
		d.Oversized -= w.persisted[i].Oversized
		d.KernelDrops -= w.persisted[i].KernelDrops
		if !d.Zero() {
			deltas = append(deltas, d)
		}
	}
	if len(rows) == 0 && len(deltas) == 0 {
		return
	}
	_, err := w.s.store.InsertLogs(ctx, rows, deltas)
	w.s.transactions.Add(1)
	if k, ok := w.s.store.(searchKicker); ok && err == nil {
		k.KickSearch() // the rows become searchable in the background
	}
	if err != nil {
		// The rows are lost: count them as dropped (stored next time with
		// the other counters).
		w.s.writeErrors.Add(1)
		for i := range n {
			w.s.c[i].dropped.Add(n[i])
		}
		w.s.opts.Logger.Error("syslog: cannot store messages", "rows", len(rows), "err", err)
		return
	}
	for i := range n {
		w.s.c[i].stored.Add(n[i])
	}
	w.persisted = next
}
