package dashboard

import (
	"context"
	"sync"
	"time"
)

// cache keeps the answers of expensive reads (incident listings,
// investigations) for a while, so a page never waits long for them:
//
//   - a fresh answer (younger than ttl) is served as is;
//   - a stale one is served while one background refresh runs;
//   - a missing one is computed in the background; the request waits for
//     it up to its budget, then the page says it is still being computed
//     (and reloads itself) instead of hanging.
//
// Computations run on the cache's own context, not the request's: a
// reader who leaves does not waste the work. Close cancels them.
type cache struct {
	ctx    context.Context
	cancel context.CancelFunc
	ttl    time.Duration
	max    int
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
	// computing counts running computations (tests wait for it).
	wg sync.WaitGroup
}

type entry struct {
	done       chan struct{} // closed when the first computation ends
	val        any
	err        error
	at         time.Time // when val was computed
	used       time.Time
	refreshing bool
}

func newCache(ttl time.Duration, max int, now func() time.Time) *cache {
	ctx, cancel := context.WithCancel(context.Background())
	return &cache{ctx: ctx, cancel: cancel, ttl: ttl, max: max, now: now, entries: map[string]*entry{}}
}

// result is a cached answer: Ready is false while the first computation
// still runs; At is when the value was computed.
type result struct {
	Val   any
	Err   error
	At    time.Time
	Ready bool
}

// get returns the answer for key, computing it with fn when needed and
// waiting at most budget for a first computation.
func (c *cache) get(ctx context.Context, key string, budget time.Duration, fn func(context.Context) (any, error)) result {
	c.mu.Lock()
	e := c.entries[key]
	now := c.now()
	if e == nil {
		e = &entry{done: make(chan struct{})}
		c.entries[key] = e
		c.evict()
		c.start(key, e, fn, true)
	}
	e.used = now
	select {
	case <-e.done:
		if now.Sub(e.at) > c.ttl && !e.refreshing {
			e.refreshing = true
			c.start(key, e, fn, false)
		}
		r := result{Val: e.val, Err: e.err, At: e.at, Ready: true}
		c.mu.Unlock()
		return r
	default:
	}
	c.mu.Unlock()
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case <-e.done:
	case <-t.C:
		return result{}
	case <-ctx.Done():
		return result{Err: ctx.Err()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return result{Val: e.val, Err: e.err, At: e.at, Ready: true}
}

// start runs fn for e in the background; c.mu is held. A first
// computation closes e.done; a refresh replaces the value when it ends
// (a failed refresh keeps the previous answer).
func (c *cache) start(key string, e *entry, fn func(context.Context) (any, error), first bool) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		val, err := fn(c.ctx)
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case first:
			e.val, e.err, e.at = val, err, c.now()
			close(e.done)
			if err != nil {
				// Errors are not kept: the next reader tries again.
				delete(c.entries, key)
			}
		case err == nil:
			e.val, e.err, e.at = val, nil, c.now()
		}
		e.refreshing = false
	}()
}

// evict drops the least recently used finished entries over max; c.mu is
// held.
func (c *cache) evict() {
	for len(c.entries) > c.max {
		var oldKey string
		var old *entry
		for k, e := range c.entries {
			select {
			case <-e.done:
			default:
				continue
			}
			if old == nil || e.used.Before(old.used) {
				oldKey, old = k, e
			}
		}
		if old == nil {
			return
		}
		delete(c.entries, oldKey)
	}
}

// close cancels running computations and waits for them.
func (c *cache) close() {
	c.cancel()
	c.wg.Wait()
}
