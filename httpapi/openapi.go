package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/cortexhq/cortex/app"
)

// OpenAPI returns the OpenAPI 3.1 document of the REST API, generated from
// the action registry: one operation per action, its parameters (query
// string for GET, a JSON body for POST) from the action's parameter
// schema and documentation, and its 200 response from the schema of the
// action's result type (components.schemas, one per result type).
func OpenAPI(version string) map[string]any {
	paths := map[string]any{}
	schemas := map[string]any{"Error": errorSchema()}
	errResp := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{
			"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
	}
	for _, a := range app.Actions() {
		name := a.ResultName()
		result := jsonValue(a.ResultSchema())
		if prev, ok := schemas[name]; ok && !reflect.DeepEqual(prev, result) {
			panic(fmt.Sprintf("openapi: two result types named %s", name)) // caught by every test
		}
		schemas[name] = result
		same := "Same as `" + a.CLI + "`; no MCP tool."
		if tool := a.MCPTool(); tool != "" {
			same = "Same as MCP tool `" + tool + "` and `" + a.CLI + "`."
		}
		op := map[string]any{
			"operationId":    a.Name,
			"summary":        a.Description,
			"description":    a.Description + "\n\nScope `" + string(a.Scope) + "`, cost `" + string(a.Cost) + "`. " + same,
			"tags":           []string{tag(a)},
			"security":       []map[string][]string{{"bearer": {}}},
			"x-cortex-scope": string(a.Scope),
			"x-cortex-cost":  string(a.Cost),
			"responses": map[string]any{
				"200": map[string]any{"description": "the action's result",
					"content": map[string]any{"application/json": map[string]any{
						"schema": map[string]any{"$ref": "#/components/schemas/" + name}}}},
				"400": errResp("invalid parameters"),
				"401": errResp("missing or invalid bearer token"),
				"403": errResp("the token lacks the action's scope"),
				"404": errResp("not found (e.g. an unknown incident id)"),
				"429": errResp("busy: a concurrent maintenance run or a limit"),
				"500": errResp("a bug"),
				"503": errResp("the store is unavailable"),
			},
		}
		schema := a.Schema()
		if a.Method == "GET" {
			params := []map[string]any{}
			inPath := a.PathParams()
			for _, name := range a.Params() {
				prop := jsonValue(schema.Properties[name]).(map[string]any)
				delete(prop, "description")
				p := map[string]any{"name": name, "in": "query", "description": a.Doc(name), "schema": prop}
				if slices.Contains(inPath, name) {
					p["in"], p["required"] = "path", true
				}
				if _, isList := prop["items"]; isList {
					p["style"], p["explode"] = "form", true
				}
				params = append(params, p)
			}
			for old, name := range a.Aliases() {
				params = append(params, map[string]any{"name": old, "in": "query", "deprecated": true,
					"description": "the older name of " + name + " (give one of the two)", "schema": map[string]any{"type": "string"}})
			}
			if len(params) > 0 {
				op["parameters"] = params
			}
		} else {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": schema}}}
		}
		paths[a.Path] = map[string]any{strings.ToLower(a.Method): op}
	}
	paths["/health"] = map[string]any{"get": map[string]any{"operationId": "health", "summary": "Liveness (no authentication).",
		"security": []map[string][]string{}, "responses": map[string]any{"200": map[string]any{"description": "ok",
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object",
				"properties": map[string]any{"status": map[string]any{"type": "string"}, "version": map[string]any{"type": "string"}},
				"required":   []string{"status", "version"}}}}}}}}
	paths["/api/openapi.json"] = map[string]any{"get": map[string]any{"operationId": "openapi", "summary": "This document.",
		"security": []map[string][]string{{"bearer": {}}}, "responses": map[string]any{
			"200": map[string]any{"description": "the OpenAPI document", "content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"type": "object"}}}},
			"401": errResp("missing or invalid bearer token")}}}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Cortex REST API", "version": version,
			"description": "Evidence about why AI coding agents fail their users, from their transcripts. Every route is an action of " +
				"the registry shared with the MCP server and the CLI. Transcript text in results is untrusted data. Listings " +
				"return `next` while more rows follow: pass it back as `cursor`."},
		"paths": paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer",
				"description": "the read token (cortex:read) or the admin token (cortex:read + cortex:admin)"}},
			"schemas": schemas,
		},
	}
}

func errorSchema() map[string]any {
	return map[string]any{"type": "object", "required": []string{"error"},
		"properties": map[string]any{"error": map[string]any{"type": "object", "required": []string{"code", "message"},
			"properties": map[string]any{"code": map[string]any{"type": "string", "enum": []string{"invalid", "not_found",
				"conflict", "unauthorized", "forbidden", "busy", "unavailable", "internal"}},
				"message": map[string]any{"type": "string"}}}}}
}

// jsonValue turns a schema into plain JSON values (maps, slices), so the
// document can be edited and compared.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("openapi: %v", err)) // generated schemas always encode
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("openapi: %v", err))
	}
	return out
}

func tag(a app.Action) string {
	switch {
	case strings.HasPrefix(a.Path, "/api/ai/"):
		return "ai"
	default:
		return "store"
	}
}
