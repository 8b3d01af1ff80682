package incident

import (
	"reflect"
	"testing"
	"time"
)

// mergeWindows merges what overlaps or touches, in time order, an open
// start first: no call is read twice.
func TestMergeWindows(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 5, 1, 10, m, 0, 0, time.UTC) }
	w := func(a, b time.Time) [2]time.Time { return [2]time.Time{a, b} }
	for _, c := range []struct {
		name string
		in   [][2]time.Time
		want [][2]time.Time
	}{
		{"none", nil, nil},
		{"apart", [][2]time.Time{w(at(20), at(25)), w(at(1), at(5))}, [][2]time.Time{w(at(1), at(5)), w(at(20), at(25))}},
		{"overlapping", [][2]time.Time{w(at(1), at(10)), w(at(5), at(20))}, [][2]time.Time{w(at(1), at(20))}},
		{"touching", [][2]time.Time{w(at(1), at(10)), w(at(10), at(12))}, [][2]time.Time{w(at(1), at(12))}},
		{"inside", [][2]time.Time{w(at(1), at(30)), w(at(5), at(6))}, [][2]time.Time{w(at(1), at(30))}},
		{"open start", [][2]time.Time{w(at(5), at(8)), w(time.Time{}, at(6))}, [][2]time.Time{w(time.Time{}, at(8))}},
	} {
		if got := mergeWindows(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
