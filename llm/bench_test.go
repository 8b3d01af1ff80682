package llm_test

import (
	"context"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/llm"
)

// BenchmarkRunOverhead measures what the guard costs per call with an
// instant provider: admission (reading the recent audit inside the write
// transaction), the running row and the finish row. history rows of the
// last hour are in the audit first.
func BenchmarkRunOverhead(b *testing.B) {
	for _, history := range []int{0, 1000} {
		b.Run(map[int]string{0: "empty-audit", 1000: "1000-recent-rows"}[history], func(b *testing.B) {
			db := openStore(b)
			ctx := context.Background()
			cfg := llm.DefaultConfig()
			cfg.MaxPerMinute, cfg.MaxPerHour = 1<<30, 1<<30
			r, err := llm.NewRunner(ctx, cfg, db)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < history; i++ {
				if _, err := r.DryRun(ctx, llm.Spec{Action: llm.ActionAbuseAssess, Prompt: "p"}, instant{}); err != nil {
					b.Fatal(err)
				}
			}
			spec := llm.Spec{Surface: cortex.SurfaceTest, Action: llm.ActionSkillAssess, Prompt: "p",
				Metadata: map[string]any{"skill_name": "verify"}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.Run(ctx, spec, instant{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
