package cli

import (
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/postgres"
	"github.com/cortexhq/cortex/sqlite"
)

// Both stores serve every action: a store missing a read does not build.
var (
	_ app.Store = (*sqlite.DB)(nil)
	_ app.Store = (*postgres.DB)(nil)
)
