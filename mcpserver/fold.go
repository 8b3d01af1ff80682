package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// FoldTool describes a fold (app.Fold) as one MCP tool over views, the
// actions it serves: the fold's description with the cost of the views
// that are not cheap, an input schema with the selector (required, an
// enum of the views) and the union of the views' listed parameters, and
// an output schema that covers every view's result — the one schema when
// the views share it, else anyOf one compact schema per view, titled with
// its view (anyOf, not oneOf: a compact schema has no required fields, so
// a result matches several).
func FoldTool(f app.Fold, views []app.Action) *mcp.Tool {
	destructive := false
	for _, a := range views {
		destructive = destructive || a.Destructive
	}
	return &mcp.Tool{
		Name:         f.Tool,
		Description:  f.Description + foldCosts(views),
		InputSchema:  mustJSON(foldInput(f, views)),
		OutputSchema: mustJSON(foldOutput(views)),
		// app.Fold keeps views that write and views that read apart.
		Annotations: annotations(views[0].Cost == app.CostWrite, destructive),
	}
}

// foldCosts names the views of each cost class above cheap, as " (moderate:
// versions, compare; expensive: health)".
func foldCosts(views []app.Action) string {
	var parts []string
	for _, c := range []app.Cost{app.CostModerate, app.CostExpensive, app.CostWrite} {
		var names []string
		for _, a := range views {
			if a.Cost == c {
				names = append(names, a.View)
			}
		}
		if len(names) > 0 {
			parts = append(parts, string(c)+": "+strings.Join(names, ", "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// foldInput is the fold's input schema: the selector and every parameter
// a view lists. A parameter several views take is one property; where
// their wording differs the fold's shared description is used, and any
// other difference is a declaration error.
func foldInput(f app.Fold, views []app.Action) map[string]any {
	props := map[string]any{}
	for _, a := range views {
		in := inputSchema(a)
		ps, _ := in["properties"].(map[string]any)
		for name, p := range ps {
			p := p.(map[string]any)
			if desc, ok := f.Shared[name]; ok {
				p["description"] = desc
			}
			if prev, ok := props[name]; ok && !reflect.DeepEqual(prev, p) {
				panic(fmt.Sprintf("fold %s: parameter %s differs between views (%v, %v): give it a shared description",
					f.Tool, name, prev, p))
			}
			props[name] = p
		}
	}
	values := make([]any, len(views))
	for i, a := range views {
		values[i] = a.View
	}
	props[f.Param] = map[string]any{"enum": values}
	return map[string]any{"type": "object", "properties": props, "required": []string{f.Param}}
}

// foldOutput is the fold's output schema: its views' compact result
// schemas, one when they are all the same, else anyOf one per distinct
// schema titled with the views that return it, the fields every branch
// has alike moved to the root.
func foldOutput(views []app.Action) map[string]any {
	var schemas []map[string]any
	var titles [][]string
	for _, a := range views {
		out := outputSchema(a)
		i := slices.IndexFunc(schemas, func(s map[string]any) bool { return reflect.DeepEqual(s, out) })
		if i < 0 {
			schemas, titles = append(schemas, out), append(titles, nil)
			i = len(schemas) - 1
		}
		titles[i] = append(titles[i], a.View)
	}
	if len(schemas) == 1 {
		return schemas[0]
	}
	common := map[string]any{}
	first, _ := schemas[0]["properties"].(map[string]any)
	for name, p := range first {
		alike := true
		for _, s := range schemas[1:] {
			props, _ := s["properties"].(map[string]any)
			alike = alike && reflect.DeepEqual(props[name], p)
		}
		if alike {
			common[name] = p
		}
	}
	branches := make([]any, len(schemas))
	for i, s := range schemas {
		props, _ := s["properties"].(map[string]any)
		for name := range common {
			delete(props, name)
		}
		branches[i] = map[string]any{"title": strings.Join(titles[i], ", "), "properties": props}
	}
	out := map[string]any{"type": "object", "anyOf": branches}
	if len(common) > 0 {
		out["properties"] = common
	}
	return out
}

// foldHandler serves a fold: it takes the selector out of the arguments
// and hands the rest to its view's handler, which checks them against
// that action's own parameters.
func foldHandler(svc *app.Service, caller app.Caller, f app.Fold, views []app.Action, logger *slog.Logger, maxBytes int) mcp.ToolHandler {
	handlers := map[string]mcp.ToolHandler{}
	for _, a := range views {
		handlers[a.View] = handler(svc, caller, a, logger, maxBytes)
	}
	values := make([]string, len(views))
	for i, a := range views {
		values[i] = a.View
	}
	choose := fmt.Sprintf("%s (%s)", f.Param, strings.Join(values, ", "))
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]json.RawMessage
		if err := json.Unmarshal(arguments(req), &args); err != nil && len(arguments(req)) > 0 {
			return errorResult(cortex.CodeInvalid, f.Tool+": arguments must be a JSON object"), nil
		}
		raw, ok := args[f.Param]
		if !ok {
			return errorResult(cortex.CodeInvalid, f.Tool+": "+choose+" is required"), nil
		}
		var value string
		if err := json.Unmarshal(raw, &value); err != nil || !slices.Contains(values, value) {
			got := string(raw)
			if len(got) > 40 {
				got = got[:40] + "…"
			}
			return errorResult(cortex.CodeInvalid, fmt.Sprintf("%s: %s must be one of %s, got %s", f.Tool, f.Param,
				strings.Join(values, ", "), got)), nil
		}
		delete(args, f.Param)
		rest, err := json.Marshal(args)
		if err != nil { // a map of raw JSON values always encodes
			return errorResult(cortex.CodeInternal, "internal error"), nil
		}
		view := &mcp.CallToolRequest{}
		if req != nil {
			*view = *req
		}
		params := &mcp.CallToolParamsRaw{}
		if view.Params != nil {
			*params = *view.Params
		}
		params.Arguments = rest
		view.Params = params
		return handlers[value](ctx, view)
	}
}
