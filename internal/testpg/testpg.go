// Package testpg gives tests a fresh PostgreSQL database on the server
// named by $CORTEX_TEST_POSTGRES (a postgres:// URL of a role that may
// create databases). Without it the tests skip, saying so — unless
// $CORTEX_REQUIRE_POSTGRES is set (as .ci/run sets it), when they fail.
package testpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the variable holding the server's URL.
const Env = "CORTEX_TEST_POSTGRES"

// URL returns the URL of a new, empty database, dropped when the test
// ends.
func URL(tb testing.TB) string {
	tb.Helper()
	admin := os.Getenv(Env)
	if admin == "" {
		if os.Getenv("CORTEX_REQUIRE_POSTGRES") != "" {
			tb.Fatalf("%s is not set, and CORTEX_REQUIRE_POSTGRES requires the PostgreSQL tests", Env)
		}
		tb.Skipf("no PostgreSQL server: set %s=postgres://user@host:port/db to run this test (.ci/run starts one)", Env)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("connect to %s: %v", Env, err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "cortex_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE template0 ENCODING 'UTF8'`); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			tb.Errorf("drop test database: %v", err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("drop test database: %v", err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// Count runs q (one integer result) on the database at url.
func Count(tb testing.TB, url, q string, args ...any) int64 {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}
