// Package cortex holds the domain types shared by every Cortex package:
// transcript entries, roles, tools, severities, error codes and time
// helpers. It performs no I/O.
package cortex
