package fts

import (
	"context"
	"reflect"
	"testing"
)

func TestIndexerStemsAsFTS5(t *testing.T) {
	x, err := NewIndexer()
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	got, err := x.Postings(context.Background(), []string{"Memory leaks, leaked!", "", "Café permission denied"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Posting{
		{{"memori", 0}, {"leak", 1}, {"leak", 2}},
		nil,
		{{"cafe", 0}, {"permiss", 1}, {"deni", 2}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("postings = %v, want %v", got, want)
	}
	// Again: the previous batch is gone.
	got, err = x.Postings(context.Background(), []string{"running"})
	if err != nil || !reflect.DeepEqual(got, [][]Posting{{{"run", 0}}}) {
		t.Errorf("second batch = %v, %v", got, err)
	}
}
