package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// call runs a registry action for the request's caller, its parameters
// decoded from q exactly as the REST API decodes a query string.
func (d *Dashboard) call(ctx context.Context, c app.Caller, name string, q url.Values) (any, error) {
	a, err := app.ActionByName(name)
	if err != nil {
		return nil, err
	}
	params, err := a.DecodeQuery(q)
	if err != nil {
		return nil, err
	}
	return d.svc.Call(ctx, c, a, params)
}

// callAs is call with the action's result type.
func callAs[T any](d *Dashboard, r *http.Request, name string, q url.Values) (T, error) {
	var zero T
	res, err := d.call(r.Context(), callerFrom(r), name, q)
	if err != nil {
		return zero, err
	}
	v, ok := res.(T)
	if !ok {
		return zero, cortex.Errorf(cortex.CodeInternal, "%s answered %T", name, res)
	}
	return v, nil
}

// slow is an expensive read served through the cache: Ready false while
// it is still being computed, At when its answer was computed.
type slow[T any] struct {
	Val   T
	Err   error
	At    time.Time
	Ready bool
}

// Age says how old a cached answer is, for the page ("as of 12 s ago").
func (s slow[T]) Age() string {
	if s.At.IsZero() {
		return ""
	}
	age := time.Since(s.At)
	if age < 2*time.Second {
		return "just now"
	}
	return fmt.Sprintf("%s ago", age.Round(time.Second))
}

// cachedCall is callAs through the cache, keyed by action and
// parameters.
func cachedCall[T any](d *Dashboard, r *http.Request, name string, q url.Values) slow[T] {
	c := callerFrom(r)
	return cached[T](d, r, "call:"+name+"?"+q.Encode(), func(ctx context.Context) (any, error) {
		return d.call(ctx, c, name, q)
	})
}

// prefetch starts expensive reads without waiting, so a page's reads run
// together within its budget.
func (d *Dashboard) prefetch(r *http.Request, calls ...call) {
	c := callerFrom(r)
	for _, x := range calls {
		d.cache.get(r.Context(), "call:"+x.name+"?"+x.q.Encode(), 0, func(ctx context.Context) (any, error) {
			return d.call(ctx, c, x.name, x.q)
		})
	}
}

// call is an action and its parameters.
type call struct {
	name string
	q    url.Values
}

type deadlineKey struct{}

// withDeadline sets the page's deadline for expensive reads: one budget
// per page, shared by its reads (which run in parallel).
func withDeadline(r *http.Request, budget time.Duration) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), deadlineKey{}, time.Now().Add(budget)))
}

// left is what remains of the page's budget.
func (d *Dashboard) left(r *http.Request) time.Duration {
	if t, ok := r.Context().Value(deadlineKey{}).(time.Time); ok {
		return max(0, time.Until(t))
	}
	return d.o.Budget
}

// cached reads key through the cache within what is left of the page's
// budget.
func cached[T any](d *Dashboard, r *http.Request, key string, fn func(context.Context) (any, error)) slow[T] {
	res := d.cache.get(r.Context(), key, d.left(r), fn)
	out := slow[T]{Err: res.Err, At: res.At, Ready: res.Ready}
	if res.Ready && res.Err == nil {
		v, ok := res.Val.(T)
		if !ok {
			out.Err = cortex.Errorf(cortex.CodeInternal, "%s answered %T", key, res.Val)
		}
		out.Val = v
	}
	return out
}

// values builds url.Values from pairs, skipping empty values.
func values(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q
}

// only keeps the keys of q that are parameters of the action, under
// their names or older ones (tool for agent); the dashboard's own keys,
// like sort, stay out of the action call.
func only(q url.Values, name string) url.Values {
	a, err := app.ActionByName(name)
	if err != nil {
		return url.Values{}
	}
	names := a.Params()
	for old := range a.Aliases() {
		names = append(names, old)
	}
	out := url.Values{}
	for _, p := range names {
		if v, ok := q[p]; ok && !(len(v) == 1 && v[0] == "") {
			out[p] = v
		}
	}
	return out
}
