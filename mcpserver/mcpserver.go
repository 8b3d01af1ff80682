// Package mcpserver is Cortex's MCP surface: the actions of the app
// registry (app.Actions) served as MCP tools, over stdio (cortex mcp) or
// streamable HTTP.
//
// # Tools
//
// Most actions are a tool of the same name. Every listed tool costs
// tokens in every agent session, so some are served together, each by a
// tool that takes one more parameter: a lens's own incident actions by
// the all-lens actions incidents and investigate (lens=…), and the
// actions of a fold (app.Fold) by one tool with a selector — events
// kind=skill|mcp|hook|abuse, skill view=health|versions|compare|propose|
// evals. REST and the CLI keep one route and one command per action.
//
// There is no single "cortex" tool with an action enum and a union
// schema over everything. Real clients (Claude Code, Codex, Gemini CLI)
// show the model each tool's own input schema, validate arguments per
// tool, and let users allow-list tools one by one (mcp__cortex__investigate
// auto-approved, mcp__cortex__purge gated behind a prompt). A fold keeps
// those where they matter: its views are read actions about one subject
// with mostly the same parameters, allowed or denied together (app.Fold
// refuses views that differ in scope or in writing), and each call is
// checked against its view's own parameters, so a parameter of another
// view is refused by name. Admin tools stay tools of their own and are
// not listed to a caller without the admin scope.
//
// # Results and errors
//
// A successful call returns the action's result as structured content
// (always a JSON object) and the same compact JSON as text, for clients
// that read only text. Every failure of the action — invalid or unknown
// parameters, a missing scope, nothing found, a busy store — is a tool
// result with IsError set and the text {"error":{"code","message"}}, the
// shape of the REST API's errors, so the model sees it and can correct
// the call. Results larger than app.MaxResultBytes are refused the same way
// with a hint to narrow the call. Unknown tool names are protocol errors,
// answered by the SDK itself.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// ServerName is the implementation name the server reports to clients.
const ServerName = "cortex"

// New returns an MCP server exposing the actions of the registry that
// caller may call, called on svc as caller: an action is its own tool, a
// view of a fold (app.Fold) or, for a lens's own incident actions, served
// by the all-lens tools incidents and investigate (app.Action.Lens);
// admin actions are not listed to a caller without the admin scope.
// version is reported as the server's version.
func New(svc *app.Service, caller app.Caller, version string) *mcp.Server {
	logger := svc.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "Cortex", Version: version}, &mcp.ServerOptions{
		Instructions: instructions(svc, caller),
		Logger:       logger,
		// Tools only; the tool list never changes during a session.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	listed(caller, func(a app.Action) {
		server.AddTool(ToolFor(a), handler(svc, caller, a, logger, app.MaxResultBytes))
	}, func(f app.Fold, views []app.Action) {
		server.AddTool(FoldTool(f, views), foldHandler(svc, caller, f, views, logger, app.MaxResultBytes))
	})
	return server
}

// Tools returns the tools New lists to caller, as tools/list sends them
// (for documents and tests).
func Tools(caller app.Caller) []*mcp.Tool {
	var out []*mcp.Tool
	listed(caller, func(a app.Action) { out = append(out, ToolFor(a)) },
		func(f app.Fold, views []app.Action) { out = append(out, FoldTool(f, views)) })
	return out
}

// listed calls own for every action that is its own tool for caller, then
// fold for every fold with the views caller may call.
func listed(caller app.Caller, own func(app.Action), fold func(app.Fold, []app.Action)) {
	for _, a := range app.Actions() {
		if caller.Has(a.Scope) && a.OnMCP() {
			own(a)
		}
	}
	for _, f := range app.Folds() {
		var views []app.Action
		for _, v := range f.Values() {
			if a, ok := f.Action(v); ok && caller.Has(a.Scope) {
				views = append(views, a)
			}
		}
		if len(views) > 0 {
			fold(f, views)
		}
	}
}

// ToolFor describes an action as an MCP tool: its name, its description
// (with the cost class when a call is not cheap), its input schema, a
// compact schema of its result and behaviour hints. Every agent session
// that lists the tools pays for this text, so it says only what a model
// needs: schema descriptions, "additionalProperties" and null variants of
// inputs are left out (unknown parameters are still refused, by name).
func ToolFor(a app.Action) *mcp.Tool {
	desc := a.Description
	if a.Cost != app.CostCheap {
		desc += " (" + string(a.Cost) + ")"
	}
	return &mcp.Tool{
		Name:         a.Name,
		Description:  desc,
		InputSchema:  mustJSON(inputSchema(a)),
		OutputSchema: mustJSON(outputSchema(a)),
		Annotations:  annotations(a.Cost == app.CostWrite, a.Destructive),
	}
}

// annotations are the behaviour hints of a tool. The destructive hint
// means something only for a tool that is not read-only (MCP
// specification): read tools leave it out. (The SDK always sends the
// idempotent hint; reads are idempotent.)
func annotations(write, destructive bool) *mcp.ToolAnnotations {
	ann := &mcp.ToolAnnotations{ReadOnlyHint: !write, IdempotentHint: !write, OpenWorldHint: new(false)}
	if write {
		ann.DestructiveHint = new(destructive)
	}
	return ann
}

// inputSchema is the action's parameter schema as a tool's input schema:
// no description (the tool has one), no additionalProperties, and
// parameters typed as what a caller sends (a list, not "null or list").
func inputSchema(a app.Action) map[string]any {
	m := jsonObject(a.Schema())
	delete(m, "description")
	delete(m, "additionalProperties")
	if props, ok := m["properties"].(map[string]any); ok {
		for name, p := range props {
			if a.Unlisted(name) != "" {
				// Accepted, not advertised: see app.Action.Unlisted.
				delete(props, name)
				continue
			}
			if p, ok := p.(map[string]any); ok {
				p["type"] = nonNull(p["type"])
				if _, enum := p["enum"]; enum {
					delete(p, "type") // the values say it
				}
			}
		}
	}
	return m
}

// outputDepth is how deep a tool's output schema describes the result:
// its top-level fields and their types (the shape of nested objects is
// in the REST API's OpenAPI document and docs/mcp/SCHEMA.md).
const outputDepth = 1

// outputSchema is a compact schema of the action's result, generated from
// the same Go type: the top-level fields with their types, nothing deeper
// (clients check structured content against it; it stays true because it
// only drops detail).
func outputSchema(a app.Action) map[string]any {
	m := compact(jsonObject(a.ResultSchema()), 0)
	m["type"] = "object"
	return m
}

// compact keeps a schema's type and, above outputDepth, its properties
// and items, dropping descriptions, required lists and closed-object
// markers.
func compact(m map[string]any, depth int) map[string]any {
	out := map[string]any{}
	if t, ok := m["type"]; ok {
		out["type"] = t
	}
	if depth >= outputDepth {
		return out
	}
	if props, ok := m["properties"].(map[string]any); ok {
		cp := map[string]any{}
		for name, p := range props {
			if p, ok := p.(map[string]any); ok {
				cp[name] = compact(p, depth+1)
			}
		}
		out["properties"] = cp
	}
	if items, ok := m["items"].(map[string]any); ok {
		out["items"] = compact(items, depth+1)
	}
	return out
}

// nonNull drops "null" from a type list (["null","array"] → "array").
func nonNull(t any) any {
	list, ok := t.([]any)
	if !ok {
		return t
	}
	var keep []any
	for _, x := range list {
		if x != "null" {
			keep = append(keep, x)
		}
	}
	if len(keep) == 1 {
		return keep[0]
	}
	return keep
}

func jsonObject(v any) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(mustJSON(v), &m); err != nil {
		panic(fmt.Sprintf("schema is not a JSON object: %v", err)) // generated schemas always are
	}
	return m
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode schema: %v", err)) // generated schemas always encode
	}
	return b
}

// instructions returns the guidance of the help action for the server's
// instructions, or "" when the caller may not call help.
func instructions(svc *app.Service, caller app.Caller) string {
	a, err := app.ActionByName("help")
	if err != nil {
		return ""
	}
	res, err := svc.Call(context.Background(), caller, a, nil)
	if err != nil {
		return ""
	}
	if h, ok := res.(app.Help); ok {
		return h.Guidance
	}
	return ""
}

// handler calls action a for every tools/call of its tool (or, for a
// folded action, of its view: the fold's handler removes the selector
// first); results over maxBytes of JSON are refused. Messages name the
// call as the client made it (skill view=health, not skill_health).
func handler(svc *app.Service, caller app.Caller, a app.Action, logger *slog.Logger, maxBytes int) mcp.ToolHandler {
	label := a.MCPTool()
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		defer func() {
			if r := recover(); r != nil {
				logger.Error("mcp tool panicked", "tool", label, "caller", caller.Name, "panic", r, "stack", string(debug.Stack()))
				res = errorResult(cortex.CodeInternal, "internal error")
			}
		}()
		raw := bytes.TrimSpace(arguments(req))
		if len(raw) > 0 && raw[0] != '{' && string(raw) != "null" {
			return errorResult(cortex.CodeInvalid, label+": arguments must be a JSON object"), nil
		}
		params, err := a.DecodeJSON(raw)
		if err != nil {
			return toolError(ctx, logger, a, label, caller, err), nil
		}
		out, err := svc.Call(ctx, caller, a, params)
		if err != nil {
			return toolError(ctx, logger, a, label, caller, err), nil
		}
		text, err := compactJSON(out)
		if err != nil {
			return toolError(ctx, logger, a, label, caller, fmt.Errorf("encode %s result: %w", a.Name, err)), nil
		}
		if len(text) > maxBytes {
			return errorResult(cortex.CodeInvalid, fmt.Sprintf(
				"%s: the result is %d bytes, over the %d-byte limit of one tool result; narrow the call "+
					"(limit=1, a smaller max_bytes, or a narrower skill, session or since)", label, len(text), maxBytes)), nil
		}
		if len(text) == 0 || text[0] != '{' {
			return toolError(ctx, logger, a, label, caller, fmt.Errorf("%s result is not a JSON object", a.Name)), nil
		}
		content := string(text)
		if r, ok := out.(markdowner); ok && r.MarkdownReport() != "" {
			// Asked for a report (format=md): the text is the report.
			content = r.MarkdownReport()
		}
		return &mcp.CallToolResult{
			// The raw JSON is sent as is: no second encoding.
			StructuredContent: json.RawMessage(text),
			Content:           []mcp.Content{&mcp.TextContent{Text: content}},
		}, nil
	}
}

// markdowner is an answer that can carry a Markdown report.
type markdowner interface{ MarkdownReport() string }

// arguments returns the raw arguments of a call (nil when absent).
func arguments(req *mcp.CallToolRequest) []byte {
	if req == nil || req.Params == nil {
		return nil
	}
	return req.Params.Arguments
}

// toolError turns an action error into an IsError result, its message
// naming the call as label rather than the action. Internal errors are
// logged with their detail; the caller sees only the safe message.
func toolError(ctx context.Context, logger *slog.Logger, a app.Action, label string, caller app.Caller, err error) *mcp.CallToolResult {
	code, msg := cortex.ErrorCode(err), cortex.ErrorMessage(err)
	var ce *cortex.Error
	if !errors.As(err, &ce) {
		if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			code, msg = cortex.CodeUnavailable, a.Name+": canceled"
		}
	}
	if code == cortex.CodeInternal {
		logger.Error("mcp tool failed", "tool", label, "caller", caller.Name, "surface", caller.Surface, "err", err)
	}
	if rest, ok := strings.CutPrefix(msg, a.Name+":"); ok {
		msg = label + ":" + rest
	}
	return errorResult(code, msg)
}

// errorResult is a tool error with the REST error body as text.
func errorResult(code cortex.Code, msg string) *mcp.CallToolResult {
	body := struct {
		Error struct {
			Code    cortex.Code `json:"code"`
			Message string      `json:"message"`
		} `json:"error"`
	}{}
	body.Error.Code, body.Error.Message = code, msg
	text, err := compactJSON(body)
	if err != nil { // a struct of two strings always encodes
		text = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// compactJSON encodes v without HTML escaping (transcripts are full of
// <, > and &) and without a trailing newline.
func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// HTTPHandler serves the tools over streamable HTTP, stateless and with
// JSON responses: every request gets a server for the caller that
// caller(r) returns. Authentication is the job of the middleware in front
// of it, which puts the caller in the request.
func HTTPHandler(svc *app.Service, caller func(*http.Request) app.Caller, version string) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return New(svc, caller(r), version)
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: svc.Logger})
}

// ServeStdio serves the tools over stdin and stdout until the client
// closes stdin or ctx is canceled (both a normal end: nil). Nothing else
// may write to stdout meanwhile.
//
// It is Server.Run without Run's error log on cancellation: a signal is
// how agents stop their servers.
func ServeStdio(ctx context.Context, svc *app.Service, caller app.Caller, version string) error {
	ss, err := New(svc, caller, version).Connect(ctx, &mcp.StdioTransport{}, nil)
	if err != nil {
		return fmt.Errorf("mcp stdio server: connect: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-done
		return nil
	case err := <-done:
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
			return nil
		}
		return fmt.Errorf("mcp stdio server: %w", err)
	}
}
