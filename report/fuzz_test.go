package report

import (
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

// FuzzUntrustedText: whatever a transcript holds, the report renders it
// as text — no tag the report does not write itself, no control
// character.
func FuzzUntrustedText(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		md := Investigation(cortex.Investigation{Total: 1, Bundles: []cortex.Bundle{bundle(s)}})
		if strings.ContainsAny(md, "\x00\x1b\r") {
			t.Fatalf("control character in the report of %q", s)
		}
		out := render(t, md)
		if m := forbidden.FindString(stripOwn(out)); m != "" {
			t.Fatalf("%q renders %s:\n%s", s, m, out)
		}
		_ = ModelMarkdown(s)
	})
}
