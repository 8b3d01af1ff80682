package dashboard

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/lifecycle"
)

// The subject pages: skills, MCP servers and hooks, each a table of what
// was used with its incidents, and a page per skill with its health,
// versions and the comparison of its last two versions (the skill
// lifecycle actions).

// windowParam is the time window of the subject pages (default 30 days).
func windowParam(q url.Values) string {
	if s := q.Get("since"); s != "" {
		return s
	}
	return "30d"
}

// skillRow is one skill in the health table.
type skillRow struct {
	cortex.SkillSummary
	Incidents        int
	IncidentSessions int
	Worst            float64
	LastIncident     string
	// Rate is the share of the skill's sessions with an incident.
	Rate float64
	URL  string
}

type skillsData struct {
	Query    url.Values
	Since    string
	Rows     []skillRow
	Cut      bool
	Waiting  bool
	IncErr   string
	Age      string
	Sort     string
	Desc     bool
	ScanCut  bool
	Incident int
}

func (d skillsData) title() string { return "Skills" }
func (d skillsData) nav() string   { return "skills" }
func (d skillsData) pending() bool { return d.Waiting }

// SortURL links the table sorted by key (toggling the direction when it
// is the current key).
func (d skillsData) SortURL(key string) string {
	dir := "desc"
	if d.Sort == key && d.Desc {
		dir = "asc"
	}
	q := url.Values{}
	for k, v := range d.Query {
		q[k] = v
	}
	q.Set("sort", key)
	q.Set("dir", dir)
	return "/skills?" + q.Encode()
}

// SortMark is the arrow of the current sort column.
func (d skillsData) SortMark(key string) string {
	if d.Sort != key {
		return ""
	}
	if d.Desc {
		return "▼"
	}
	return "▲"
}

func skillURL(name string, since string) string {
	u := "/skills/" + url.PathEscape(name)
	if since != "" {
		u += "?" + values("since", since).Encode()
	}
	return u
}

func (d *Dashboard) skills(w http.ResponseWriter, r *http.Request) (string, any, error) {
	q := r.URL.Query()
	out := skillsData{Query: q, Since: windowParam(q), Sort: q.Get("sort"), Desc: q.Get("dir") != "asc"}
	if out.Sort == "" {
		out.Sort, out.Desc = "incidents", true
	}
	incQ := values("since", sinceParam(out.Since), "limit", "100", "tool", q.Get("tool"), "project", q.Get("project"), "host", q.Get("host"))
	d.prefetch(r, call{"skill_incidents", incQ})
	summary, err := callAs[cortex.EventList[cortex.SkillSummary]](d, r, "skill_events",
		values("summary", "true", "since", sinceParam(out.Since), "limit", strconv.Itoa(app.MaxEventsLimit), "tool", q.Get("tool"),
			"project", q.Get("project"), "host", q.Get("host")))
	if err != nil {
		return "", nil, err
	}
	out.Cut = summary.Truncated
	byName := map[string]*skillRow{}
	for _, s := range summary.Events {
		row := &skillRow{SkillSummary: s, URL: skillURL(s.SkillName, out.Since)}
		out.Rows = append(out.Rows, *row)
		byName[s.SkillName] = &out.Rows[len(out.Rows)-1]
	}
	incs := cachedCall[cortex.IncidentList](d, r, "skill_incidents", incQ)
	switch {
	case incs.Err != nil:
		out.IncErr = cortex.ErrorMessage(incs.Err)
	case !incs.Ready:
		out.Waiting = true
	default:
		out.Age, out.ScanCut, out.Incident = incs.Age(), incs.Val.Truncated, incs.Val.Total
		sessions := map[string]map[string]bool{}
		for _, inc := range incs.Val.Incidents {
			row := byName[inc.SkillName]
			if row == nil {
				continue
			}
			row.Incidents++
			row.Worst = max(row.Worst, inc.Score)
			row.LastIncident = max(row.LastIncident, inc.LastSeen)
			if sessions[inc.SkillName] == nil {
				sessions[inc.SkillName] = map[string]bool{}
			}
			sessions[inc.SkillName][string(inc.Tool)+"/"+inc.Hostname+"/"+inc.SessionID] = true
		}
		for i := range out.Rows {
			row := &out.Rows[i]
			row.IncidentSessions = len(sessions[row.SkillName])
			if row.Sessions > 0 {
				row.Rate = float64(row.IncidentSessions) / float64(row.Sessions)
			}
		}
	}
	slices.SortStableFunc(out.Rows, func(a, b skillRow) int {
		var c int
		switch out.Sort {
		case "name":
			c = strings.Compare(a.SkillName, b.SkillName)
		case "events":
			c = cmp.Compare(a.Events, b.Events)
		case "sessions":
			c = cmp.Compare(a.Sessions, b.Sessions)
		case "rate":
			c = cmp.Compare(a.Rate, b.Rate)
		case "worst":
			c = cmp.Compare(a.Worst, b.Worst)
		case "last":
			c = strings.Compare(a.LastSeen, b.LastSeen)
		default:
			c = cmp.Or(cmp.Compare(a.Incidents, b.Incidents), cmp.Compare(a.Worst, b.Worst))
		}
		if out.Desc {
			c = -c
		}
		return cmp.Or(c, strings.Compare(a.SkillName, b.SkillName))
	})
	return "skills", out, nil
}

type skillData struct {
	Name      string
	Since     string
	Summary   *cortex.SkillSummary
	Chart     barChart
	Unit      string
	EventsCut bool
	Incidents slow[cortex.IncidentList]
	Findings  slow[cortex.Investigation]
	Rows      []incidentRow
	Health    slow[app.SkillHealthReport]
	Versions  slow[app.SkillVersionList]
	Compare   slow[lifecycle.Comparison]
}

func (d skillData) title() string { return "Skill " + d.Name }
func (d skillData) nav() string   { return "skills" }
func (d skillData) pending() bool {
	return !d.Incidents.Ready || !d.Findings.Ready || !d.Health.Ready || !d.Versions.Ready || !d.Compare.Ready
}

// SkillHealth is the skill's health, when computed.
func (d skillData) SkillHealth() *lifecycle.Health {
	if d.Health.Ready && d.Health.Err == nil && len(d.Health.Val.Skills) > 0 {
		return &d.Health.Val.Skills[0]
	}
	return nil
}

// CompareSides are the two sides of the comparison.
func (d skillData) CompareSides() []lifecycle.Side {
	return []lifecycle.Side{d.Compare.Val.Before, d.Compare.Val.After}
}

// Pct renders a rate as a percentage.
func (d skillData) Pct(x float64) string { return strconv.FormatFloat(x*100, 'f', 0, 64) + "%" }
func (d skillData) ChartSVG() any        { return d.Chart.SVG() }
func (d skillData) ChartEmpty() bool     { return d.Chart.empty() }

// EvidenceURL links a finding's evidence row into its session.
func (d skillData) EvidenceURL(b cortex.Bundle, id int64) string {
	return sessionURL(b.Incident.SessionID, b.Incident.Tool, b.Incident.Hostname, id)
}

// IncidentURL links a bundle's incident page.
func (d skillData) IncidentURL(inc cortex.Incident) string {
	return incidentURL(inc, values("skill", d.Name), "skill_investigate")
}

func (d *Dashboard) skillPage(w http.ResponseWriter, r *http.Request) (string, any, error) {
	name := r.PathValue("skill")
	since := windowParam(r.URL.Query())
	out := skillData{Name: name, Since: since}
	summary, err := callAs[cortex.EventList[cortex.SkillSummary]](d, r, "skill_events",
		values("summary", "true", "skill", name, "since", sinceParam(since)))
	if err != nil {
		return "", nil, err
	}
	for i, s := range summary.Events {
		if s.SkillName == name {
			out.Summary = &summary.Events[i]
		}
	}
	if out.Summary == nil {
		return "", nil, cortex.Errorf(cortex.CodeNotFound, "no events of skill %q since %s (see the skills page)", name, since)
	}
	events, err := callAs[cortex.EventList[cortex.SkillEventRow]](d, r, "skill_events",
		values("skill", name, "since", sinceParam(since), "limit", strconv.Itoa(app.MaxEventsLimit)))
	if err != nil {
		return "", nil, err
	}
	out.EventsCut = events.Truncated
	from, err := d.overviewSince(since)
	if err != nil {
		return "", nil, err
	}
	if from.IsZero() {
		from, _ = cortex.ParseTimestamp(out.Summary.FirstSeen)
	}
	b := newBuckets(from, d.now())
	var stamps []string
	for _, e := range events.Events {
		stamps = append(stamps, e.Timestamp)
	}
	out.Unit = b.Unit
	out.Chart = barChart{Title: "Skill events and incidents per " + b.Unit, Labels: b.Labels,
		Series: []series{{Name: "events", Class: "s1", Values: b.count(stamps)}}}
	incQ := values("skill", name, "since", sinceParam(since), "limit", "100")
	healthQ := values("skill", name, "since", sinceParam(since))
	invQ := values("skill", name, "since", sinceParam(since), "detail", "true") // the page shows whole bundles
	// Versions and their comparison span the skill's whole history.
	lcQ := values("skill", name)
	d.prefetch(r, call{"skill_incidents", incQ}, call{"skill_investigate", invQ}, call{"skill_health", healthQ},
		call{"skill_versions", lcQ}, call{"skill_compare", lcQ})
	out.Incidents = cachedCall[cortex.IncidentList](d, r, "skill_incidents", incQ)
	if out.Incidents.Ready && out.Incidents.Err == nil {
		var inc []string
		for _, i := range out.Incidents.Val.Incidents {
			inc = append(inc, i.FirstSeen)
			out.Rows = append(out.Rows, incidentRow{Incident: i, URL: out.IncidentURL(i),
				SessionURL: sessionURL(i.SessionID, i.Tool, i.Hostname, firstID(i.AnchorLogIDs))})
		}
		out.Chart.Series = append(out.Chart.Series, series{Name: "incidents", Class: "s3", Values: b.count(inc)})
	}
	out.Findings = cachedCall[cortex.Investigation](d, r, "skill_investigate", invQ)
	out.Health = cachedCall[app.SkillHealthReport](d, r, "skill_health", healthQ)
	out.Versions = cachedCall[app.SkillVersionList](d, r, "skill_versions", lcQ)
	out.Compare = cachedCall[lifecycle.Comparison](d, r, "skill_compare", lcQ)
	return "skill", out, nil
}

// mcpRow is one MCP server and tool in the recent calls.
type mcpRow struct {
	Server, Tool string
	Calls        int
	Failed       int
	Sessions     int
	Last         string
	URL          string
	sessions     map[string]bool
}

// incidentSection is the incident list of a subject page (the
// "increows" template).
type incidentSection struct {
	Since     string
	Incidents slow[cortex.IncidentList]
	IncRows   []incidentRow
}

func (s incidentSection) pending() bool { return !s.Incidents.Ready }

func sectionQuery(since string) url.Values { return values("since", sinceParam(since), "limit", "100") }

// incidentSection lists a lens's incidents since a window (started early
// with prefetch, read last, so the page's other reads use its budget).
func (d *Dashboard) incidentSection(r *http.Request, lens, since string) incidentSection {
	out := incidentSection{Since: since}
	out.Incidents = cachedCall[cortex.IncidentList](d, r, lens+"_incidents", sectionQuery(since))
	out.IncRows = incidentRows(out.Incidents, url.Values{}, lens+"_investigate")
	return out
}

type mcpData struct {
	incidentSection
	Rows  []mcpRow
	Calls int
	Cut   bool
}

func (d mcpData) title() string { return "MCP servers" }
func (d mcpData) nav() string   { return "mcp" }

func failed(e cortex.ToolEventRow) bool {
	return (e.IsError != nil && *e.IsError) || e.Status == "error" || (e.ExitCode != nil && *e.ExitCode != 0)
}

func (d *Dashboard) mcpServers(w http.ResponseWriter, r *http.Request) (string, any, error) {
	since := windowParam(r.URL.Query())
	d.prefetch(r, call{cortex.LensMCP + "_incidents", sectionQuery(since)})
	var out mcpData
	calls, err := callAs[cortex.EventList[cortex.ToolEventRow]](d, r, "mcp_events",
		values("only_mcp", "true", "since", sinceParam(since), "limit", strconv.Itoa(app.MaxEventsLimit)))
	if err != nil {
		return "", nil, err
	}
	out.Calls, out.Cut = len(calls.Events), calls.Truncated
	rows := map[[2]string]*mcpRow{}
	for _, e := range calls.Events {
		k := [2]string{e.MCPServer, e.MCPTool}
		row := rows[k]
		if row == nil {
			row = &mcpRow{Server: e.MCPServer, Tool: e.MCPTool, sessions: map[string]bool{},
				URL: "/incidents?" + values("lens", cortex.LensMCP, "target", e.MCPServer, "since", sinceParam(since)).Encode()}
			rows[k] = row
		}
		row.Calls++
		if failed(e) {
			row.Failed++
		}
		row.sessions[e.SessionID] = true
		row.Last = max(row.Last, e.Timestamp)
	}
	for _, row := range rows {
		row.Sessions = len(row.sessions)
		out.Rows = append(out.Rows, *row)
	}
	slices.SortFunc(out.Rows, func(a, b mcpRow) int {
		return cmp.Or(cmp.Compare(b.Failed, a.Failed), cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Server, b.Server),
			strings.Compare(a.Tool, b.Tool))
	})
	out.incidentSection = d.incidentSection(r, cortex.LensMCP, since)
	return "mcp", out, nil
}

func incidentRows(res slow[cortex.IncidentList], listing url.Values, action string) []incidentRow {
	if !res.Ready || res.Err != nil {
		return nil
	}
	var out []incidentRow
	for _, inc := range res.Val.Incidents {
		out = append(out, incidentRow{Incident: inc, URL: incidentURL(inc, listing, action),
			SessionURL: sessionURL(inc.SessionID, inc.Tool, inc.Hostname, firstID(inc.AnchorLogIDs))})
	}
	return out
}

// hookRow is one hook's runs in the window.
type hookRow struct {
	Event, Name string
	Runs        int
	Statuses    map[string]int
	Last        string
	URL         string
}

// StatusList renders the status counts "failed 2, success 10".
func (h hookRow) StatusList() string {
	var keys []string
	for k := range h.Statuses {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+" "+strconv.Itoa(h.Statuses[k]))
	}
	return strings.Join(parts, ", ")
}

type hooksData struct {
	incidentSection
	Runtime    []hookRow
	RuntimeCut bool
	Config     []cortex.HookEventRow
	ConfigCut  bool
}

func (d hooksData) title() string { return "Hooks" }
func (d hooksData) nav() string   { return "hooks" }

func (d *Dashboard) hooks(w http.ResponseWriter, r *http.Request) (string, any, error) {
	since := windowParam(r.URL.Query())
	d.prefetch(r, call{cortex.LensHook + "_incidents", sectionQuery(since)})
	var out hooksData
	runs, err := callAs[cortex.EventList[cortex.HookEventRow]](d, r, "hook_events",
		values("evidence_kind", cortex.EvidenceRuntime, "since", sinceParam(since), "limit", strconv.Itoa(app.MaxEventsLimit)))
	if err != nil {
		return "", nil, err
	}
	out.RuntimeCut = runs.Truncated
	byHook := map[[2]string]*hookRow{}
	var order [][2]string
	for _, e := range runs.Events {
		k := [2]string{e.HookEvent, e.HookName}
		row := byHook[k]
		if row == nil {
			hook := e.HookEvent
			if e.HookName != "" {
				hook = e.HookName
			}
			row = &hookRow{Event: e.HookEvent, Name: e.HookName, Statuses: map[string]int{},
				URL: "/incidents?" + values("lens", cortex.LensHook, "hook", hook, "since", sinceParam(since)).Encode()}
			byHook[k] = row
			order = append(order, k)
		}
		row.Runs++
		row.Statuses[e.Status]++
		row.Last = max(row.Last, e.Timestamp)
	}
	for _, k := range order {
		out.Runtime = append(out.Runtime, *byHook[k])
	}
	slices.SortStableFunc(out.Runtime, func(a, b hookRow) int { return cmp.Compare(b.Runs, a.Runs) })
	config, err := callAs[cortex.EventList[cortex.HookEventRow]](d, r, "hook_events",
		values("evidence_kind", cortex.EvidenceConfig, "limit", strconv.Itoa(app.MaxEventsLimit)))
	if err != nil {
		return "", nil, err
	}
	out.Config, out.ConfigCut = config.Events, config.Truncated
	out.incidentSection = d.incidentSection(r, cortex.LensHook, since)
	return "hooks", out, nil
}

// pct formats a share as a percentage.
func pct(v float64) string { return strconv.FormatFloat(v*100, 'f', 0, 64) + "%" }
