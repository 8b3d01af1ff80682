package app

import (
	"context"
	"os"
	"path/filepath"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/sqlite"
)

// SignalsParams are the parameters of signals.
type SignalsParams struct {
	Agent   string `json:"agent,omitempty" alias:"tool" doc:"only this agent: claude, codex or gemini (older name: tool)"`
	Project string `json:"project,omitempty" doc:"only this project (as stored, e.g. a repository path)"`
	Host    string `json:"host,omitempty" doc:"only this host" unlisted:"narrows by machine"`
	Since   string `json:"since,omitempty" jsonschema:"e.g. 7d, today, 2026-11-30" doc:"newer than: 30m, 7d, 2w, today, yesterday, 2026-11-30 or RFC 3339"`
	Until   string `json:"until,omitempty" doc:"older than (same forms as since)"`
}

// CalibrateSignals measures every signal of every lens on the store (see
// incident.Engine.Calibrate). Given a labelled corpus directory (local
// callers only: a remote caller never makes the server read a path), it
// also indexes that corpus into a throwaway store and adds each signal's
// hits on its cases.
func (s *Service) CalibrateSignals(ctx context.Context, p cortex.CalibrationParams, labelled string,
	progress func(string)) (cortex.SignalCalibration, error) {
	var cases []incident.LabelledCase
	if labelled != "" {
		var err error
		if cases, err = incident.ReadLabelled(labelled); err != nil {
			return cortex.SignalCalibration{}, err
		}
	}
	cal, err := incident.New(s.DB).Calibrate(ctx, p, progress)
	if err != nil || labelled == "" {
		return cal, err
	}
	if progress != nil {
		progress("indexing the labelled corpus " + labelled)
	}
	tmp, err := os.MkdirTemp("", "cortex-labelled-")
	if err != nil {
		return cal, cortex.WrapError(cortex.CodeInternal, err, "labelled corpus: %v", err)
	}
	defer os.RemoveAll(tmp)
	db, err := sqlite.Open(ctx, filepath.Join(tmp, "labelled.db"), sqlite.Options{})
	if err != nil {
		return cal, err
	}
	defer db.Close()
	abs, err := filepath.Abs(labelled)
	if err != nil {
		return cal, cortex.WrapError(cortex.CodeInvalid, err, "labelled corpus: %v", err)
	}
	if _, err := ingest.Index(ctx, db, ingest.Options{Paths: []string{abs}, Hostname: "labelled"}); err != nil {
		return cal, err
	}
	err = incident.New(db).CompareLabelled(ctx, abs, cases, &cal)
	return cal, err
}
