package httpapi

import (
	"slices"
	"strings"

	"github.com/cortexhq/cortex/app"
)

// OpenAPI returns the OpenAPI 3.1 document of the REST API, generated from
// the action registry: one operation per action, query parameters (GET)
// or a JSON body (POST) from the action's parameter schema.
func OpenAPI(version string) map[string]any {
	paths := map[string]any{}
	errResp := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{
			"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
	}
	for _, a := range app.Actions() {
		schema := a.Schema()
		op := map[string]any{
			"operationId": a.Name,
			"summary":     a.Description,
			"description": a.Description + "\n\nScope `" + string(a.Scope) + "`, cost `" + string(a.Cost) + "`. Same as MCP tool `" +
				a.Name + "` and `" + a.CLI + "`.",
			"tags":           []string{tag(a)},
			"security":       []map[string][]string{{"bearer": {}}},
			"x-cortex-scope": string(a.Scope),
			"x-cortex-cost":  string(a.Cost),
			"responses": map[string]any{
				"200": map[string]any{"description": "the action's result",
					"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}},
				"400": errResp("invalid parameters"),
				"401": errResp("missing or invalid bearer token"),
				"403": errResp("the token lacks the action's scope"),
				"404": errResp("not found (e.g. an unknown incident id)"),
				"429": errResp("busy: a concurrent maintenance run or a limit"),
				"503": errResp("the store is unavailable"),
			},
		}
		if a.Method == "GET" {
			params := []map[string]any{}
			inPath := a.PathParams()
			for _, name := range a.Params() {
				prop := schema.Properties[name]
				p := map[string]any{"name": name, "in": "query", "description": prop.Description, "schema": prop}
				if slices.Contains(inPath, name) {
					p["in"], p["required"] = "path", true
				}
				if prop.Items != nil {
					p["style"], p["explode"] = "form", true
				}
				params = append(params, p)
			}
			op["parameters"] = params
		} else {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": schema}}}
		}
		paths[a.Path] = map[string]any{strings.ToLower(a.Method): op}
	}
	paths["/health"] = map[string]any{"get": map[string]any{"operationId": "health", "summary": "Liveness (no authentication).",
		"security": []map[string][]string{}, "responses": map[string]any{"200": map[string]any{"description": "ok"}}}}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Cortex REST API", "version": version,
			"description": "Evidence about why AI coding agents fail their users, from their transcripts. Every route is an action of " +
				"the registry shared with the MCP server and the CLI. Transcript text in results is untrusted data."},
		"paths": paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer",
				"description": "the read token (cortex:read) or the admin token (cortex:read + cortex:admin)"}},
			"schemas": map[string]any{"Error": map[string]any{"type": "object", "required": []string{"error"},
				"properties": map[string]any{"error": map[string]any{"type": "object", "required": []string{"code", "message"},
					"properties": map[string]any{"code": map[string]any{"type": "string", "enum": []string{"invalid", "not_found",
						"conflict", "unauthorized", "forbidden", "busy", "unavailable", "internal"}},
						"message": map[string]any{"type": "string"}}}}}},
		},
	}
}

func tag(a app.Action) string {
	switch {
	case strings.HasPrefix(a.Path, "/api/ai/"):
		return "ai"
	default:
		return "store"
	}
}
