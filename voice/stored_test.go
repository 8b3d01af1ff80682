package voice

import (
	"reflect"
	"testing"
)

func TestStoredReadings(t *testing.T) {
	if Version <= 0 {
		t.Fatalf("version %d", Version)
	}
	for _, text := range []string{"", "okay lets update the readme", "you can stop. unnecessary",
		"i didnt ask you to rewrite it", "ah crap we still have merge issues?", "dont make any changes yet"} {
		r := Read(text, nil)
		enc := Encode(r)
		if (enc == "") != (len(r.Categories) == 0 && len(r.Terms) == 0 && len(r.Phrases) == 0) {
			t.Errorf("%q: encoded %q for %+v", text, enc, r)
		}
		back, err := Decode(enc)
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Errorf("%q: round trip %+v %v, want %+v", text, back, err, r)
		}
	}
	if _, err := Decode("{not json"); err == nil {
		t.Error("a broken reading decoded")
	}
}
