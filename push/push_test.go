package push_test

import (
	"context"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/testpg"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/postgres"
	"github.com/cortexhq/cortex/push"
	"github.com/cortexhq/cortex/store"
)

func openTeam(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A push sends every row; a second push sends nothing.
func TestPushIdempotent(t *testing.T) {
	url := testpg.URL(t)
	local, _ := teststore.Indexed(t, testcorpus.Real(t))
	team := openTeam(t, url)
	ctx := context.Background()
	r1, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop", BatchRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first push: %+v", r1)
	if r1.Inserted["logs"] == 0 || r1.Inserted["ai_mcp_events"] == 0 || r1.Inserted[postgres.SkillBodiesTable] == 0 {
		t.Fatalf("first push inserted %v", r1.Inserted)
	}
	r2, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range append(store.PushTables, store.Table{Name: postgres.SkillBodiesTable}) {
		if r2.Inserted[tb.Name] != 0 || r2.Updated[tb.Name] != 0 || r2.Deleted[tb.Name] != 0 {
			t.Errorf("re-push changed %s: %+v", tb.Name, r2)
		}
	}
}
