package app

import (
	"context"
	"os"
	"time"

	"github.com/cortexhq/cortex/hookconfig"
	"github.com/cortexhq/cortex/sqlite"
)

// HookConfigResult reports a hook-configuration collection.
type HookConfigResult struct {
	Files     []hookconfig.FileResult `json:"files"`
	Hooks     int                     `json:"hooks"`
	Inserted  int64                   `json:"inserted"`
	Refreshed int64                   `json:"refreshed"`
	// Note restates what these rows are.
	Note string `json:"note"`
}

// CollectHookConfig reads the agents' hook configuration (user files under
// home, project files of every project seen in transcripts) and records
// each configured hook as config_inventory / trusted_hash_state evidence:
// new hooks are inserted, known ones get last_seen. Configured is never
// treated as executed.
func (s *Service) CollectHookConfig(ctx context.Context, home, host string) (HookConfigResult, error) {
	res := HookConfigResult{Files: []hookconfig.FileResult{},
		Note: "configuration inventory: these hooks are configured, which is not proof that they ran"}
	db, err := s.local("hook configuration collection")
	if err != nil {
		return res, err
	}
	projects, err := db.Projects(ctx)
	if err != nil {
		return res, err
	}
	hooks, files := hookconfig.Collect(ctx, hookconfig.Sources(home, projects))
	if files != nil {
		res.Files = files
	}
	res.Hooks = len(hooks)
	if len(hooks) == 0 {
		return res, ctx.Err()
	}
	rows := make([]sqlite.ConfigHook, len(hooks))
	changed := map[string]time.Time{}
	for i, h := range hooks {
		rows[i] = sqlite.ConfigHook{Tool: h.Tool, Hook: h.HookEvent}
		if h.Source.Project != "" {
			rows[i].Project = h.Source.Project
		}
		// A configured hook's time is when its file last changed, not
		// when Cortex read it (that is its last_seen).
		at, ok := changed[h.Source.Path]
		if !ok {
			if fi, err := os.Stat(h.Source.Path); err == nil {
				at = fi.ModTime()
			}
			changed[h.Source.Path] = at
		}
		rows[i].Configured = at
	}
	res.Inserted, res.Refreshed, err = db.StoreConfigHooks(ctx, host, s.Now(), rows)
	if err != nil {
		return res, err
	}
	return res, nil
}
