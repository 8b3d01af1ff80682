//go:build !race

package syslogd

const raceEnabled = false
