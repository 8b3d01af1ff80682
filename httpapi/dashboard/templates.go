package dashboard

import (
	"fmt"
	"html/template"
	"io/fs"
	"strconv"
	"strings"

	"github.com/cortexhq/cortex"
)

var funcs = template.FuncMap{
	"when":  when,
	"short": shortID,
	"num":   num,
	"pct":   pct,
	"upper": strings.ToUpper,
	"join":  strings.Join,
	"score": func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) },
	"roleClass": func(r cortex.Role) string {
		return "role-" + strings.ReplaceAll(string(r), "_", "-")
	},
	"sessionURL": sessionURL,
	"rowURL":     func(id int64) string { return "/rows/" + strconv.FormatInt(id, 10) },
	"skillURL":   skillURL,
	"deref": func(p *int64) string {
		if p == nil {
			return "—"
		}
		return strconv.FormatInt(*p, 10)
	},
	"ms": func(p *int64) string {
		if p == nil {
			return ""
		}
		return fmt.Sprintf("%.1f s", float64(*p)/1000)
	},
	"add":  func(a, b int) int { return a + b },
	"list": func(xs ...string) []string { return xs },
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			k, _ := kv[i].(string)
			m[k] = kv[i+1]
		}
		return m
	},
}

// num formats an integer with thin thousands separators.
func num(v any) string {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	default:
		return fmt.Sprint(v)
	}
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(",")
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// parseTemplates parses each page with the layout.
func (d *Dashboard) parseTemplates() error {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return err
	}
	d.pages = map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return fmt.Errorf("dashboard template %s: %w", name, err)
		}
		d.pages[name] = t
	}
	return nil
}
