// Package app is Cortex's service layer: one method per user-facing action,
// shared by the CLI, the MCP server and the REST API, so the three behave
// the same. Methods validate and clamp their parameters, then call the
// store.
package app

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/llm"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/store"
)

// Service implements the actions.
type Service struct {
	// DB is the store the actions read: the local SQLite store or a team's
	// PostgreSQL store.
	DB  Store
	Now func() time.Time
	// Logger receives audit lines of admin actions (nil: discarded).
	Logger *slog.Logger
	// Host names this machine in locks and audit lines ("" = hostname).
	Host string
	// Prices estimate the cost of token usage (nil: cortex.DefaultPrices).
	Prices cortex.Prices
	// Home is the home folder searched for skills' SKILL.md files ("" =
	// the user's).
	Home string

	runner      *llm.Runner
	newProvider ProviderFactory
	llmConfig   llm.Config

	codecOnce sync.Once
	rawCodec  *rawcodec.Codec
	codecErr  error
}

// New returns a service over db.
func New(db Store) *Service { return &Service{DB: db, Now: time.Now} }

// Limits of the list actions.
const (
	DefaultSearchLimit   = 20
	MaxSearchLimit       = 500
	DefaultSessionsLimit = 50
	MaxSessionsLimit     = 1000
)

func checkTool(t cortex.Tool) error {
	if t != "" && !t.Valid() {
		return cortex.Errorf(cortex.CodeInvalid, "unknown agent %q (use claude, codex or gemini)", t)
	}
	return nil
}

func checkRange(since, until time.Time) error {
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return cortex.Errorf(cortex.CodeInvalid, "since (%s) must be before until (%s)", cortex.FormatTime(since), cortex.FormatTime(until))
	}
	return nil
}

// Search runs a full-text search over stored rows.
func (s *Service) Search(ctx context.Context, p cortex.SearchParams) (cortex.SearchResult, error) {
	if strings.TrimSpace(p.Query) == "" {
		return cortex.SearchResult{}, cortex.Errorf(cortex.CodeInvalid, "search query is empty")
	}
	if err := checkTool(p.Tool); err != nil {
		return cortex.SearchResult{}, err
	}
	if p.Role != "" && !validRole(p.Role) {
		return cortex.SearchResult{}, cortex.Errorf(cortex.CodeInvalid, "unknown role %q", p.Role)
	}
	if err := checkRange(p.Since, p.Until); err != nil {
		return cortex.SearchResult{}, err
	}
	limit, clamped, err := cortex.ClampLimit(p.Limit, DefaultSearchLimit, MaxSearchLimit)
	if err != nil {
		return cortex.SearchResult{}, err
	}
	p.Limit = limit
	res, err := s.DB.Search(ctx, p)
	res.LimitClampedTo = clamped
	if err != nil || len(res.Hits) > 0 || p.After != nil {
		return res, err
	}
	// Nothing: say whether matches exist outside the time range, and how
	// new the store's data is.
	if !p.Since.IsZero() || !p.Until.IsZero() {
		wide := p
		wide.Since, wide.Until, wide.Limit, wide.Rank = time.Time{}, time.Time{}, 1, false
		if more, err := s.DB.Search(ctx, wide); err == nil && len(more.Hits) > 0 {
			res.NewestMatchOutsideRange = more.Hits[0].Timestamp
		}
	}
	res.NewestRow, err = s.DB.NewestRow(ctx)
	return res, err
}

func validRole(r cortex.Role) bool {
	for _, x := range cortex.Roles() {
		if x == r {
			return true
		}
	}
	return false
}

// Sessions lists agent sessions.
func (s *Service) Sessions(ctx context.Context, p cortex.SessionParams) (cortex.SessionList, error) {
	if err := checkTool(p.Tool); err != nil {
		return cortex.SessionList{}, err
	}
	if err := checkRange(p.Since, p.Until); err != nil {
		return cortex.SessionList{}, err
	}
	limit, clamped, err := cortex.ClampLimit(p.Limit, DefaultSessionsLimit, MaxSessionsLimit)
	if err != nil {
		return cortex.SessionList{}, err
	}
	p.Limit = limit
	res, err := s.DB.Sessions(ctx, p)
	res.LimitClampedTo = clamped
	if err != nil {
		return res, err
	}
	usage, err := s.DB.SessionUsage(ctx, res.Sessions)
	if err != nil {
		return res, err
	}
	for i := range res.Sessions {
		se := &res.Sessions[i]
		se.Usage = s.prices().Summarize(usage[store.SessionScope{Tool: se.Tool, Session: se.SessionID, Host: se.Hostname}])
		se.Models = se.Usage.Models()
	}
	return res, nil
}

func (s *Service) prices() cortex.Prices {
	if s.Prices == nil {
		return cortex.DefaultPrices()
	}
	return s.Prices
}

// incidentUsage sets what each incident's session spent on the model
// between the incident's first and last event.
func (s *Service) incidentUsage(ctx context.Context, incs []cortex.Incident) error {
	for i := range incs {
		if err := s.setIncidentUsage(ctx, &incs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) setIncidentUsage(ctx context.Context, inc *cortex.Incident) error {
	if inc.SessionID == "" {
		return nil
	}
	byModel, err := s.DB.UsageBetween(ctx, store.SessionScope{Tool: inc.Tool, Session: inc.SessionID, Host: inc.Hostname},
		inc.FirstSeen, inc.LastSeen)
	if err != nil {
		return err
	}
	inc.Usage = s.prices().Summarize(byModel)
	return nil
}

// Status describes the store.
func (s *Service) Status(ctx context.Context) (cortex.Status, error) {
	return s.DB.Status(ctx)
}
