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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/mcpserver"
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
	b.WriteString("Every action is one REST route and one CLI command, with the same parameters (unknown parameters\n")
	b.WriteString("are rejected) and the same result; on MCP it is the tool of the same name, except a lens's own incident\n")
	b.WriteString("actions, which the all-lens tools `incidents` and `investigate` serve with `lens=…` or a subject filter,\n")
	b.WriteString("and the views of the folded tools `events` (`kind=…`) and `skill` (`view=…`) (column MCP; see SCHEMA.md);\n")
	b.WriteString("`skill_assess` and `help` are no MCP tools. Admin tools are listed only to MCP clients with the admin\n")
	b.WriteString("scope. Tuning parameters (`window_minutes`, `correlation_window_minutes`, `max_bytes`, `min_score`), `host`,\n")
	b.WriteString("the filters that `target`, `hook` or `status` cover (`mcp_server`, `mcp_tool`, `hook_event`, `hook_source`,\n")
	b.WriteString("`evidence_kind`) and the local-only parameters of `skill_propose` and `skill_evals` are accepted on MCP but\n")
	b.WriteString("not listed in the tools' schemas (SCHEMA.md says which, where). Scopes: `cortex:read`;\n")
	b.WriteString("`cortex:admin` implies read. Cost classes: `cheap` (one indexed query), `moderate` (a candidate scan),\n")
	b.WriteString("`expensive` (evidence bundles), `write` (changes the store). The parameter `agent` was called `tool`\n")
	b.WriteString("before; `tool` is still accepted everywhere (`--tool` on the CLI). Listings return `next` while more\n")
	b.WriteString("rows follow; pass it back as `cursor`.\n\n")
	b.WriteString("| action | scope | cost | REST | CLI | MCP | parameters |\n|---|---|---|---|---|---|---|\n")
	for _, a := range app.Actions() {
		tool := "—"
		if a.MCPTool() != "" {
			tool = "`" + a.MCPTool() + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | `%s %s` | `%s` | %s | %s |\n", a.Name, a.Scope, a.Cost, a.Method, a.Path,
			strings.ReplaceAll(a.CLI, "|", "\\|"), tool, codeList(a.Params()))
	}
	b.WriteString("\n## Descriptions\n\n")
	for _, a := range app.Actions() {
		fmt.Fprintf(&b, "- **`%s`** — %s\n", a.Name, a.Description)
	}
	return b.String()
}

// schemas lists each action's parameters and, for MCP tools, the input
// and output schemas exactly as tools/list sends them.
func schemas() string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("# MCP tool schemas\n\n")
	b.WriteString("The parameters of every Cortex action, derived from its parameter struct, and for each MCP tool the\n")
	b.WriteString("input and output schemas exactly as `tools/list` sends them (compact: every agent session pays for\n")
	b.WriteString("them in tokens; the output schema gives the result's top-level fields, the full result schemas are in\n")
	b.WriteString("the OpenAPI document at `GET /api/openapi.json`). The REST routes take the same parameters (GET: query\n")
	b.WriteString("string, lists as repeated keys or comma separated; POST: JSON body). The folded tools, which serve\n")
	b.WriteString("several actions as views, follow the actions.\n")
	for _, a := range app.Actions() {
		fmt.Fprintf(&b, "\n## `%s`\n\n%s (scope `%s`, cost `%s`", a.Name, a.Description, a.Scope, a.Cost)
		switch {
		case a.NotOnMCP != "":
			fmt.Fprintf(&b, "; not an MCP tool: %s", a.NotOnMCP)
		case !a.OnMCP():
			fmt.Fprintf(&b, "; on MCP: `%s`", a.MCPTool())
		}
		b.WriteString(")\n\n| parameter | type | description |\n|---|---|---|\n")
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
			doc := a.Doc(name)
			values := p.Enum
			if p.Items != nil {
				values = p.Items.Enum
			}
			if len(values) > 0 {
				doc += fmt.Sprintf(" (one of: %s)", enumList(values))
			}
			if why := a.Unlisted(name); why != "" && (a.OnMCP() || a.Fold != nil) {
				doc += " — " + why + ": accepted on MCP, not listed"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, typ, strings.ReplaceAll(doc, "|", "\\|"))
		}
		if a.OnMCP() {
			toolSchemas(&b, mcpserver.ToolFor(a))
		}
	}
	b.WriteString("\n# Folded MCP tools\n\n")
	b.WriteString("Each serves several read actions, one per value of its selector parameter (required). A call is checked\n")
	b.WriteString("against the parameters of its view's action (a parameter of another view is unknown) and answers what the\n")
	b.WriteString("action answers; the output schema is anyOf one compact schema per view (titled with its views), with the\n")
	b.WriteString("fields every view has alike at the root.\n")
	for _, f := range app.Folds() {
		var views []app.Action
		fmt.Fprintf(&b, "\n## `%s`\n\n| `%s` | action | scope | cost |\n|---|---|---|---|\n", f.Tool, f.Param)
		for _, v := range f.Values() {
			a, _ := f.Action(v)
			views = append(views, a)
			fmt.Fprintf(&b, "| `%s` | [`%s`](#%s) | `%s` | %s |\n", v, a.Name, a.Name, a.Scope, a.Cost)
		}
		tool := mcpserver.FoldTool(f, views)
		fmt.Fprintf(&b, "\n%s\n", tool.Description)
		toolSchemas(&b, tool)
	}
	return b.String()
}

// toolSchemas writes a tool's input and output schemas as tools/list
// sends them.
func toolSchemas(b *strings.Builder, tool *mcp.Tool) {
	in, err := json.MarshalIndent(tool.InputSchema, "", "  ")
	if err != nil {
		in = []byte(err.Error())
	}
	out, err := json.MarshalIndent(tool.OutputSchema, "", "  ")
	if err != nil {
		out = []byte(err.Error())
	}
	fmt.Fprintf(b, "\n<details><summary>MCP input and output schemas</summary>\n\n```json\n%s\n```\n\n```json\n%s\n```\n\n</details>\n",
		in, out)
}

func enumList(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprintf("`%v`", v)
	}
	return strings.Join(parts, ", ")
}

func codeList(names []string) string {
	if len(names) == 0 {
		return "—"
	}
	return "`" + strings.Join(names, "`, `") + "`"
}
