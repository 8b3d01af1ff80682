package sqlite

import (
	"strings"

	"github.com/cortexhq/cortex/fts"
)

// BuildFTSQuery turns user search text (see fts.Parse) into a safe FTS5
// MATCH expression: each term becomes an FTS5 string (a phrase of its
// tokens), a prefix gets *, an OR group is parenthesized, groups are
// joined with AND — so no input can produce an FTS syntax error. It also
// returns the plain words for snippets.
func BuildFTSQuery(input string) (string, []string, error) {
	q, err := fts.Parse(input)
	if err != nil {
		return "", nil, err
	}
	parts := make([]string, len(q.Groups))
	for i, g := range q.Groups {
		alts := make([]string, len(g))
		for j, t := range g {
			alts[j] = `"` + strings.ReplaceAll(t.Text, `"`, `""`) + `"`
			if t.Prefix {
				alts[j] += "*"
			}
		}
		parts[i] = strings.Join(alts, " OR ")
		if len(g) > 1 {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, " AND "), q.Words, nil
}
