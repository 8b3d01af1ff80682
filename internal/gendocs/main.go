// Command gendocs writes the documents generated from the action registry:
// docs/contracts/mcp-actions-current.md and docs/mcp/SCHEMA.md. Run it from
// the module root after changing an action: go run ./internal/gendocs.
// A test fails while the committed files differ from what it writes.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cortexhq/cortex/app"
)

// Generated documents, relative to the module root.
const (
	contractsPath = "docs/contracts/mcp-actions-current.md"
	schemaPath    = "docs/mcp/SCHEMA.md"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	for path, body := range documents() {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", full)
	}
}

// documents renders every generated document.
func documents() map[string]string {
	return map[string]string{contractsPath: contracts(), schemaPath: schemas()}
}

const header = "<!-- Generated from the action registry (app/registry.go) by `go run ./internal/gendocs`. Do not edit. -->\n\n"

// contracts is the table of actions: the contract every surface keeps.
func contracts() string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("# Cortex actions (current contract)\n\n")
	b.WriteString("Every action is one MCP tool of the same name, one REST route and one CLI command, with the same\n")
	b.WriteString("parameters (unknown parameters are rejected) and the same result. Scopes: `cortex:read`;\n")
	b.WriteString("`cortex:admin` implies read. Cost classes: `cheap` (one indexed query), `moderate` (a candidate scan),\n")
	b.WriteString("`expensive` (evidence bundles), `write` (changes the store).\n\n")
	b.WriteString("| action | scope | cost | REST | CLI | parameters |\n|---|---|---|---|---|---|\n")
	for _, a := range app.Actions() {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | `%s %s` | `%s` | %s |\n", a.Name, a.Scope, a.Cost, a.Method, a.Path, a.CLI,
			codeList(a.Params()))
	}
	b.WriteString("\n## Descriptions\n\n")
	for _, a := range app.Actions() {
		fmt.Fprintf(&b, "- **`%s`** — %s\n", a.Name, a.Description)
	}
	return b.String()
}

// schemas lists each action's parameter schema.
func schemas() string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("# MCP tool schemas\n\n")
	b.WriteString("The input schema of every Cortex MCP tool, derived from the action's parameter struct. The REST routes\n")
	b.WriteString("take the same parameters (GET: query string, lists as repeated keys or comma separated; POST: JSON body).\n")
	for _, a := range app.Actions() {
		s, err := json.MarshalIndent(a.Schema(), "", "  ")
		if err != nil {
			s = []byte(err.Error())
		}
		fmt.Fprintf(&b, "\n## `%s`\n\n%s (scope `%s`, cost `%s`)\n\n| parameter | type | description |\n|---|---|---|\n",
			a.Name, a.Description, a.Scope, a.Cost)
		sch := a.Schema()
		for _, name := range a.Params() {
			p := sch.Properties[name]
			typ := p.Type
			if typ == "" && len(p.Types) > 0 {
				typ = strings.Join(p.Types, "|")
			}
			if p.Items != nil {
				typ = "array of " + p.Items.Type
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, typ, strings.ReplaceAll(p.Description, "|", "\\|"))
		}
		fmt.Fprintf(&b, "\n<details><summary>JSON schema</summary>\n\n```json\n%s\n```\n\n</details>\n", s)
	}
	return b.String()
}

func codeList(names []string) string {
	if len(names) == 0 {
		return "—"
	}
	return "`" + strings.Join(names, "`, `") + "`"
}
