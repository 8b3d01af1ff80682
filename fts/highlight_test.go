package fts

import "testing"

// TestPorterStep1 checks the inflectional stems against the examples of
// Porter's paper (step 1a, 1b, 1c).
func TestPorterStep1(t *testing.T) {
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agree", "plastered": "plaster", "bled": "bled", "motoring": "motor", "sing": "sing",
		"conflated": "conflate", "troubled": "trouble", "sized": "size", "hopping": "hop", "tanned": "tan",
		"falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file",
		"happy": "happi", "sky": "sky", "timeout": "timeout", "time": "time", "timing": "time", "errors": "error",
	} {
		if got := porterStep1(in); got != want {
			t.Errorf("porterStep1(%q) = %q, want %q", in, got, want)
		}
	}
}
