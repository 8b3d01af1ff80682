package dashboard

import (
	"cmp"
	"context"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// overviewWindow is the overview's default time window.
const overviewWindow = "30d"

// windows are the overview's window choices (value, label).
var windows = [][2]string{{"7d", "7 days"}, {"30d", "30 days"}, {"90d", "90 days"}, {"365d", "a year"}, {"all", "all time"}}

// overviewSince resolves a window ("all": no bound).
func (d *Dashboard) overviewSince(window string) (time.Time, error) {
	if window == "all" {
		return time.Time{}, nil
	}
	t, err := cortex.ParseTimeArg(window, d.now())
	if err != nil {
		return time.Time{}, cortex.Errorf(cortex.CodeInvalid, "since: %s", cortex.ErrorMessage(err))
	}
	return t, nil
}

func overviewKey(lens, window string, now time.Time) string {
	return "overview:" + lens + ":" + window + ":" + now.UTC().Format("2006-01-02")
}

// lensIncidents reads every incident of a lens in a window through the
// cache.
func (d *Dashboard) lensIncidents(ctx context.Context, lens, window string, budget time.Duration) result {
	since, err := d.overviewSince(window)
	if err != nil {
		return result{Err: err, Ready: true}
	}
	return d.cache.get(ctx, overviewKey(lens, window, d.now()), budget, func(ctx context.Context) (any, error) {
		return d.svc.AllIncidents(ctx, lens, cortex.IncidentParams{Since: since})
	})
}

type lensSummary struct {
	Lens      string
	Class     string
	Total     int
	Truncated bool
	Ready     bool
	Err       string
	Age       string
}

type subjectScore struct {
	Lens, Subject string
	Incidents     int
	Score         float64
	URL           string
}

type overviewData struct {
	Status       cortex.Status
	StatusAge    string
	TypedPrompts int64
	Week         int
	WeekMore     bool
	Window       string
	Windows      [][2]string
	Chart        barChart
	Unit         string
	Lenses       []lensSummary
	Worst        []subjectScore
	Pending      bool
}

func (o overviewData) title() string    { return "Overview" }
func (o overviewData) nav() string      { return "overview" }
func (o overviewData) pending() bool    { return o.Pending }
func (o overviewData) ChartSVG() any    { return o.Chart.SVG() }
func (o overviewData) ChartEmpty() bool { return o.Chart.empty() }

// subjectParam is the parameter that selects a lens's subject in its
// incident listing (lenses without one are listed whole).
var subjectParam = map[string]string{cortex.LensSkill: "skill", cortex.LensMCP: "target", cortex.LensHook: "hook"}

func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request) (string, any, error) {
	window := r.URL.Query().Get("since")
	if window == "" {
		window = overviewWindow
	}
	since, err := d.overviewSince(window)
	if err != nil {
		return "", nil, err
	}
	// Status counts what the store holds (a few hundred ms on a store of
	// millions of rows): cached like the incident reads.
	d.prefetch(r, call{"status", url.Values{}})
	for _, lens := range app.LensNames() {
		d.lensIncidents(r.Context(), lens, window, 0)
	}
	status := cachedCall[cortex.Status](d, r, "status", url.Values{})
	if status.Err != nil {
		return "", nil, status.Err
	}
	out := overviewData{Status: status.Val, StatusAge: status.Age(), Window: window, Windows: windows, Pending: !status.Ready}
	for _, byRole := range out.Status.RowsByRole {
		out.TypedPrompts += byRole[string(cortex.RoleUser)]
	}
	sess, err := callAs[cortex.SessionList](d, r, "sessions", values("since", "7d", "limit", strconv.Itoa(app.MaxSessionsLimit)))
	if err != nil {
		return "", nil, err
	}
	out.Week, out.WeekMore = len(sess.Sessions), sess.Truncated
	now := d.now()
	var lists []cortex.IncidentList
	for i, lens := range app.LensNames() {
		res := d.lensIncidents(r.Context(), lens, window, d.left(r))
		ls := lensSummary{Lens: lens, Class: "s" + strconv.Itoa(i%8), Ready: res.Ready}
		if res.Ready {
			ls.Age = slow[any]{At: res.At}.Age()
		}
		list, _ := res.Val.(cortex.IncidentList)
		switch {
		case res.Err != nil:
			ls.Err = cortex.ErrorMessage(res.Err)
		case !res.Ready:
			out.Pending = true
		default:
			ls.Total, ls.Truncated = list.Total, list.CandidateWindowTruncated
		}
		lists = append(lists, list)
		out.Lenses = append(out.Lenses, ls)
	}
	from := since
	if from.IsZero() {
		from = now.AddDate(0, 0, -30)
		for _, l := range lists {
			for _, inc := range l.Incidents {
				if t, err := cortex.ParseTimestamp(inc.FirstSeen); err == nil && t.Before(from) {
					from = t
				}
			}
		}
	}
	b := newBuckets(from, now)
	out.Unit = b.Unit
	out.Chart = barChart{Title: "Incidents per " + b.Unit + " and lens", Labels: b.Labels}
	worst := map[[2]string]*subjectScore{}
	for i, l := range lists {
		lens := out.Lenses[i].Lens
		var stamps []string
		for _, inc := range l.Incidents {
			stamps = append(stamps, inc.FirstSeen)
			param, ok := subjectParam[lens]
			subject := inc.Subject()
			if !ok || subject == "" {
				continue
			}
			k := [2]string{lens, subject}
			if worst[k] == nil {
				worst[k] = &subjectScore{Lens: lens, Subject: subject,
					URL: "/incidents?" + values("lens", lens, param, subject, "since", sinceParam(window)).Encode()}
			}
			worst[k].Incidents++
			worst[k].Score += inc.Score
		}
		out.Chart.Series = append(out.Chart.Series, series{Name: lens, Class: out.Lenses[i].Class, Values: b.count(stamps)})
	}
	for _, s := range worst {
		out.Worst = append(out.Worst, *s)
	}
	slices.SortFunc(out.Worst, func(a, b subjectScore) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Subject, b.Subject))
	})
	out.Worst = out.Worst[:min(len(out.Worst), 10)]
	return "overview", out, nil
}

// sinceParam is a window as an action's since ("all": none).
func sinceParam(window string) string {
	if window == "all" {
		return ""
	}
	return window
}

// incidentRow is an incident in a listing with its page link.
type incidentRow struct {
	cortex.Incident
	URL        string
	SessionURL string
}

type incidentsData struct {
	Lens    string
	Lenses  []string
	Query   url.Values
	Rows    []incidentRow
	Errors  []string
	Waiting []string
	Total   int
	Cut     bool
	Age     string
}

func (d incidentsData) title() string { return "Incidents" }
func (d incidentsData) nav() string   { return "incidents" }
func (d incidentsData) pending() bool { return len(d.Waiting) > 0 }

// Signals are the signals present in the rows, for filter links.
func (d incidentsData) Signals() []string {
	var out []string
	for _, r := range d.Rows {
		for _, s := range r.SignalsPresent {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return out
}

// With links the listing with key set to v ("" removes it).
func (d incidentsData) With(key, v string) template.URL {
	return template.URL("/incidents?" + withParam(d.Query, key, v))
}

func withParam(q url.Values, key, v string) string {
	c := url.Values{}
	for k, vs := range q {
		c[k] = vs
	}
	if v == "" {
		c.Del(key)
	} else {
		c.Set(key, v)
	}
	return c.Encode()
}

// incidentURL links an incident's page with the listing's parameters
// pinned to the incident's session and a time range around it, so the
// investigation finds it again quickly and whatever the clock says.
func incidentURL(inc cortex.Incident, listing url.Values, action string) string {
	q := only(listing, action)
	for _, k := range []string{"limit", "since", "until", "incident_id", "all", "include_usage"} {
		q.Del(k)
	}
	window := inc.WindowMinutes
	if window <= 0 {
		window = 10
	}
	margin := time.Duration(window+5) * time.Minute
	if t, err := cortex.ParseTimestamp(inc.FirstSeen); err == nil {
		q.Set("since", cortex.FormatTime(t.Add(-margin)))
	}
	if t, err := cortex.ParseTimestamp(inc.LastSeen); err == nil {
		q.Set("until", cortex.FormatTime(t.Add(margin)))
	}
	q.Set("session", inc.SessionID)
	q.Set("tool", string(inc.Tool))
	q.Set("host", inc.Hostname)
	return "/incidents/" + url.PathEscape(inc.Lens) + "/" + url.PathEscape(inc.ID) + "?" + q.Encode()
}

// sessionURL links a session page, at a row when row > 0.
func sessionURL(session string, tool cortex.Tool, host string, row int64) string {
	u := "/sessions/" + url.PathEscape(session) + "?" + values("tool", string(tool), "host", host).Encode()
	if row > 0 {
		id := strconv.FormatInt(row, 10)
		u += "&row=" + id + "#row-" + id
	}
	return u
}

func (d *Dashboard) incidents(w http.ResponseWriter, r *http.Request) (string, any, error) {
	q := r.URL.Query()
	out := incidentsData{Lens: q.Get("lens"), Lenses: app.LensNames(), Query: q}
	lenses := out.Lenses
	if out.Lens != "" {
		if !slices.Contains(lenses, out.Lens) {
			return "", nil, cortex.Errorf(cortex.CodeInvalid, "unknown lens %q (lenses: %s)", out.Lens, strings.Join(lenses, ", "))
		}
		lenses = []string{out.Lens}
	}
	params := func(lens string) url.Values {
		p := only(q, lens+"_incidents")
		if !p.Has("limit") {
			p.Set("limit", "100")
		}
		return p
	}
	for _, lens := range lenses {
		d.prefetch(r, call{lens + "_incidents", params(lens)})
	}
	for _, lens := range lenses {
		action := lens + "_incidents"
		params := params(lens)
		res := cachedCall[cortex.IncidentList](d, r, action, params)
		switch {
		case res.Err != nil:
			out.Errors = append(out.Errors, lens+": "+cortex.ErrorMessage(res.Err))
		case !res.Ready:
			out.Waiting = append(out.Waiting, lens)
		default:
			out.Total += res.Val.Total
			out.Cut = out.Cut || res.Val.Truncated
			out.Age = res.Age()
			for _, inc := range res.Val.Incidents {
				out.Rows = append(out.Rows, incidentRow{Incident: inc, URL: incidentURL(inc, params, lens+"_investigate"),
					SessionURL: sessionURL(inc.SessionID, inc.Tool, inc.Hostname, firstID(inc.AnchorLogIDs))})
			}
		}
	}
	slices.SortStableFunc(out.Rows, func(a, b incidentRow) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(b.LastSeen, a.LastSeen))
	})
	return "incidents", out, nil
}

func firstID(ids []int64) int64 {
	if len(ids) == 0 {
		return 0
	}
	return ids[0]
}

type incidentData struct {
	Lens    string
	ID      string
	Waiting bool
	Inv     cortex.Investigation
	Bundle  *cortex.Bundle
	Session string
	Age     string
	JSONURL string
}

func (d incidentData) title() string { return "Incident " + d.ID }
func (d incidentData) nav() string   { return "incidents" }
func (d incidentData) pending() bool { return d.Waiting }

// RowURL links an evidence row into its session.
func (d incidentData) RowURL(e cortex.EvidenceRow) string {
	if e.SessionID == "" {
		return "/rows/" + strconv.FormatInt(e.ID, 10)
	}
	return sessionURL(e.SessionID, e.Tool, e.Hostname, e.ID)
}

// EvidenceURL links an evidence id of a finding into the incident's
// session.
func (d incidentData) EvidenceURL(id int64) string {
	if d.Bundle == nil {
		return "/rows/" + strconv.FormatInt(id, 10)
	}
	inc := d.Bundle.Incident
	return sessionURL(inc.SessionID, inc.Tool, inc.Hostname, id)
}

func (d *Dashboard) investigateParams(r *http.Request) (string, string, url.Values, error) {
	lens, id := r.PathValue("lens"), r.PathValue("id")
	if !slices.Contains(app.LensNames(), lens) {
		return "", "", nil, cortex.Errorf(cortex.CodeNotFound, "unknown lens %q", lens)
	}
	q := only(r.URL.Query(), lens+"_investigate")
	q.Set("incident_id", id)
	q.Set("limit", "1")
	q.Set("detail", "true") // the page shows the whole bundle
	return lens, id, q, nil
}

func (d *Dashboard) incidentPage(w http.ResponseWriter, r *http.Request) (string, any, error) {
	lens, id, q, err := d.investigateParams(r)
	if err != nil {
		return "", nil, err
	}
	res := cachedCall[cortex.Investigation](d, r, lens+"_investigate", q)
	out := incidentData{Lens: lens, ID: id, Waiting: !res.Ready, Age: res.Age(),
		JSONURL: "/incidents/" + url.PathEscape(lens) + "/" + url.PathEscape(id) + "/bundle.json?" + r.URL.RawQuery}
	if res.Err != nil {
		return "", nil, res.Err
	}
	if res.Ready {
		out.Inv = res.Val
		for i := range out.Inv.Bundles {
			if out.Inv.Bundles[i].Incident.ID == id {
				out.Bundle = &out.Inv.Bundles[i]
			}
		}
		if out.Bundle == nil {
			return "", nil, cortex.Errorf(cortex.CodeNotFound,
				"incident %s was not found with these filters (the store may have changed since the listing; open it from the incidents page again)", id)
		}
		inc := out.Bundle.Incident
		out.Session = sessionURL(inc.SessionID, inc.Tool, inc.Hostname, firstID(inc.AnchorLogIDs))
	}
	return "incident", out, nil
}

// bundleJSON serves an incident's evidence bundle as JSON (the
// investigate action's answer).
func (d *Dashboard) bundleJSON(w http.ResponseWriter, r *http.Request) {
	lens, _, q, err := d.investigateParams(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	res, err := d.call(r.Context(), callerFrom(r), lens+"_investigate", q)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	writeJSON(w, res)
}
