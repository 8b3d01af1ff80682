package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// TestResultOverLimitIsRefused checks that a result over the byte limit
// becomes a tool error asking to narrow the call, never a huge message.
func TestResultOverLimitIsRefused(t *testing.T) {
	a, err := app.ActionByName("help")
	if err != nil {
		t.Fatal(err)
	}
	caller := app.Caller{Surface: cortex.SurfaceMCP, Scopes: []app.Scope{app.ScopeRead}, Name: "test"}
	call := func(limit int) *mcp.CallToolResult {
		h := handler(app.New(nil), caller, a, slog.New(slog.DiscardHandler), limit)
		res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "help"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(app.MaxResultBytes); res.IsError {
		t.Fatalf("help under the limit failed: %+v", res)
	}
	res := call(100)
	if !res.IsError || res.StructuredContent != nil {
		t.Fatalf("want a tool error, got %+v", res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &body); err != nil || body.Error.Code != "invalid" ||
		!strings.Contains(body.Error.Message, "limit=1") || len(text) > 1000 {
		t.Fatalf("error: %s", text)
	}
}

// TestCompactJSONKeepsMarkup checks that transcript markup is not
// HTML-escaped in results.
func TestCompactJSONKeepsMarkup(t *testing.T) {
	b, err := compactJSON(map[string]string{"text": "<skill> & </skill>"})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"text":"<skill> & </skill>"}` {
		t.Fatalf("got %s", b)
	}
}

// TestArgumentsMustBeAnObject checks that arrays and scalars as arguments
// get a clear invalid error.
func TestArgumentsMustBeAnObject(t *testing.T) {
	a, err := app.ActionByName("help")
	if err != nil {
		t.Fatal(err)
	}
	caller := app.Caller{Surface: cortex.SurfaceMCP, Scopes: []app.Scope{app.ScopeRead}, Name: "test"}
	h := handler(app.New(nil), caller, a, slog.New(slog.DiscardHandler), app.MaxResultBytes)
	for _, args := range []string{`[1]`, `"x"`, `3`, ` true`} {
		res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "help", Arguments: json.RawMessage(args)}})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "arguments must be a JSON object") {
			t.Errorf("%s: %s", args, text)
		}
	}
	for _, args := range []string{``, `null`, ` {} `} {
		res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "help", Arguments: json.RawMessage(args)}})
		if err != nil || res.IsError {
			t.Errorf("%q: %v %+v", args, err, res)
		}
	}
}
