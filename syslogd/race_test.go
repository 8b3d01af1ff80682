//go:build race

package syslogd

// raceEnabled slows the store's SQLite (pure Go) about tenfold: tests that
// push many messages scale down or count rows instead of storing them.
const raceEnabled = true
