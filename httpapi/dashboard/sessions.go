package dashboard

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// sessionPageRows is the page size of the session viewer.
const sessionPageRows = 400

type sessionsData struct {
	Query url.Values
	List  cortex.SessionList
}

func (d sessionsData) title() string { return "Sessions" }
func (d sessionsData) nav() string   { return "sessions" }

// URL links a listed session.
func (d sessionsData) URL(s cortex.Session) string {
	return sessionURL(s.SessionID, s.Tool, s.Hostname, 0)
}

func (d *Dashboard) sessions(w http.ResponseWriter, r *http.Request) (string, any, error) {
	q := only(r.URL.Query(), "sessions")
	list, err := callAs[cortex.SessionList](d, r, "sessions", q)
	if err != nil {
		return "", nil, err
	}
	return "sessions", sessionsData{Query: r.URL.Query(), List: list}, nil
}

// viewRow is a transcript row as the session viewer lays it out.
type viewRow struct {
	cortex.TranscriptRow
	// Result is the result row folded under a tool call.
	Result *cortex.TranscriptRow
	// SkillRun names the skill whose run this row belongs to (shaded).
	SkillRun string
	// AgentStart marks the first row of a subagent block.
	AgentStart bool
	// Markdown is the assistant text rendered (safe HTML).
	Markdown template.HTML
	// Target marks the row the page was opened at.
	Target bool
}

type sessionData struct {
	T        cortex.SessionTranscript
	Rows     []viewRow
	Target   int64
	base     string
	Incident map[string]string
}

func (d sessionData) title() string { return "Session " + shortID(d.T.Session.SessionID) }
func (d sessionData) nav() string   { return "sessions" }

// PageURL links another page of the session (after or before a row).
func (d sessionData) PageURL(key string, id int64) string {
	return d.base + "&" + key + "=" + strconv.FormatInt(id, 10)
}

// IncidentURL links an incident of the session.
func (d sessionData) IncidentURL(id string) string { return d.Incident[id] }

// LastRow is the position of the page's last row (1-based).
func (d sessionData) LastRow() int { return d.T.Offset + len(d.T.Rows) }

func (d *Dashboard) sessionPage(w http.ResponseWriter, r *http.Request) (string, any, error) {
	q := only(r.URL.Query(), "session_show")
	q.Set("session", r.PathValue("session"))
	q.Set("detail", "true")
	if !q.Has("limit") {
		q.Set("limit", strconv.Itoa(sessionPageRows))
	}
	t, err := callAs[cortex.SessionTranscript](d, r, "session_show", q)
	if err != nil {
		return "", nil, err
	}
	s := t.Session
	out := sessionData{T: t, base: sessionURL(s.SessionID, s.Tool, s.Hostname, 0), Incident: map[string]string{}}
	out.Target, _ = strconv.ParseInt(q.Get("row"), 10, 64)
	for _, inc := range t.Incidents {
		out.Incident[inc.ID] = incidentURL(cortex.Incident{ID: inc.ID, Lens: inc.Lens, SessionID: s.SessionID, Tool: s.Tool,
			Hostname: s.Hostname, FirstSeen: inc.FirstSeen, LastSeen: inc.LastSeen}, url.Values{}, inc.Lens+"_investigate")
	}
	out.Rows = layoutRows(t.Rows, out.Target)
	return "session", out, nil
}

// layoutRows folds results under their calls, marks subagent blocks and
// the rows of each skill run (from the skill's activation to the next
// typed prompt of the same agent), and renders assistant Markdown.
func layoutRows(rows []cortex.TranscriptRow, target int64) []viewRow {
	index := make(map[int64]int, len(rows))
	for i, r := range rows {
		index[r.ID] = i
	}
	folded := map[int64]bool{}
	for _, r := range rows {
		if r.Role == cortex.RoleToolCall && r.Call != nil && r.Call.ResultLogID != nil && *r.Call.ResultLogID != r.ID {
			if _, ok := index[*r.Call.ResultLogID]; ok {
				folded[*r.Call.ResultLogID] = true
			}
		}
	}
	var out []viewRow
	run := map[string]string{} // agent → active skill
	agent := ""
	for _, r := range rows {
		if r.Role == cortex.RoleUser {
			delete(run, r.AgentID)
		}
		if len(r.Skills) > 0 {
			run[r.AgentID] = strings.Join(r.Skills, ", ")
		}
		if folded[r.ID] {
			// Shown under its call; a target row opens its call.
			if r.ID == target && len(out) > 0 {
				out[len(out)-1].Target = true
			}
			continue
		}
		v := viewRow{TranscriptRow: r, SkillRun: run[r.AgentID], Target: r.ID == target}
		v.AgentStart = r.AgentID != "" && r.AgentID != agent
		agent = r.AgentID
		if r.Role == cortex.RoleToolCall && r.Call != nil && r.Call.ResultLogID != nil {
			if i, ok := index[*r.Call.ResultLogID]; ok && rows[i].ID != r.ID {
				res := rows[i]
				v.Result = &res
			}
		}
		if r.Role == cortex.RoleAssistant {
			v.Markdown = markdown(r.Text)
		}
		out = append(out, v)
	}
	return out
}

type rowData struct {
	R          cortex.RowDetail
	SessionURL string
	Pretty     string
}

func (d rowData) title() string { return "Row " + strconv.FormatInt(d.R.ID, 10) }
func (d rowData) nav() string   { return "sessions" }

func (d *Dashboard) rowPage(w http.ResponseWriter, r *http.Request) (string, any, error) {
	row, err := callAs[cortex.RowDetail](d, r, "row_show", values("id", r.PathValue("id"), "detail", "true"))
	if err != nil {
		return "", nil, err
	}
	out := rowData{R: row, Pretty: prettyJSON(row.Raw)}
	if row.SessionID != "" {
		out.SessionURL = sessionURL(row.SessionID, row.Tool, row.Hostname, row.ID)
	}
	return "row", out, nil
}

func prettyJSON(s string) string {
	var v any
	if s == "" || json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return s
	}
	return string(b)
}

type searchData struct {
	Query url.Values
	Res   *cortex.SearchResult
	Roles []cortex.Role
	Tools []cortex.Tool
}

func (d searchData) title() string { return "Search" }
func (d searchData) nav() string   { return "search" }

// Marked renders a hit's snippet with its matched words (the search's
// highlight ranges, English stems included) in <mark>; everything else is
// escaped.
func (d searchData) Marked(h cortex.SearchHit) template.HTML {
	var b strings.Builder
	at := 0
	for _, r := range h.Highlights {
		if r[0] < at || r[0] >= r[1] || r[1] > len(h.Snippet) {
			continue
		}
		b.WriteString(template.HTMLEscapeString(h.Snippet[at:r[0]]))
		b.WriteString("<mark>" + template.HTMLEscapeString(h.Snippet[r[0]:r[1]]) + "</mark>")
		at = r[1]
	}
	b.WriteString(template.HTMLEscapeString(h.Snippet[at:]))
	return template.HTML(b.String())
}

// RowURL links a hit into its session.
func (d searchData) RowURL(h cortex.SearchHit) string {
	if h.SessionID == "" {
		return "/rows/" + strconv.FormatInt(h.ID, 10)
	}
	return sessionURL(h.SessionID, h.Tool, h.Hostname, h.ID)
}

func (d *Dashboard) search(w http.ResponseWriter, r *http.Request) (string, any, error) {
	out := searchData{Query: r.URL.Query(), Roles: cortex.Roles(), Tools: cortex.Tools()}
	q := only(out.Query, "search")
	if strings.TrimSpace(q.Get("query")) == "" {
		return "search", out, nil
	}
	res, err := callAs[cortex.SearchResult](d, r, "search", q)
	if err != nil {
		return "", nil, err
	}
	out.Res = &res
	return "search", out, nil
}

type llmData struct {
	NeedAdmin bool
	Query     url.Values
	List      cortex.InvocationList
}

func (d llmData) title() string { return "LLM audit" }
func (d llmData) nav() string   { return "llm" }

func (d *Dashboard) llmAudit(w http.ResponseWriter, r *http.Request) (string, any, error) {
	out := llmData{Query: r.URL.Query()}
	if !callerFrom(r).Has(app.ScopeAdmin) {
		out.NeedAdmin = true
		return "llm", out, nil
	}
	q := only(out.Query, "llm_invocations")
	if !q.Has("limit") {
		q.Set("limit", "200")
	}
	list, err := callAs[cortex.InvocationList](d, r, "llm_invocations", q)
	if err != nil {
		return "", nil, err
	}
	out.List = list
	return "llm", out, nil
}

func shortID(s string) string {
	if len(s) > 13 {
		return s[:8] + "…"
	}
	return s
}

// writeJSON writes v as JSON for a download.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// when renders a stored UTC timestamp as a <time> element (the script
// shows it in the browser's time zone).
func when(ts string) template.HTML {
	t, err := cortex.ParseTimestamp(ts)
	if err != nil {
		return template.HTML(template.HTMLEscapeString(ts))
	}
	return template.HTML(`<time datetime="` + t.UTC().Format(time.RFC3339) + `">` + t.UTC().Format("2006-01-02 15:04:05") +
		` UTC</time>`)
}
