package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/httpapi"
)

// openAPIValidator loads the generated document with pb33f/libopenapi and
// returns its validator.
func openAPIValidator(t *testing.T) validator.Validator {
	t.Helper()
	b, err := json.Marshal(httpapi.OpenAPI("test"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(b)
	if err != nil {
		t.Fatalf("the OpenAPI document does not load: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	return v
}

// TestOpenAPIDocumentIsValid validates the generated document against the
// OpenAPI 3.1 specification schema with a real validator
// (pb33f/libopenapi-validator), and checks every operation names the
// schema of its result type.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	v := openAPIValidator(t)
	ok, errs := v.ValidateDocument()
	if !ok {
		for _, e := range errs {
			t.Errorf("%s", e.Error())
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s: %s", se.FieldPath+" "+se.KeywordLocation, se.Reason)
			}
		}
	}
	b, _ := json.Marshal(httpapi.OpenAPI("test"))
	if strings.Contains(string(b), `"parameters":null`) {
		t.Error(`the document has "parameters": null`)
	}
	for _, a := range app.Actions() {
		if !strings.Contains(string(b), `"$ref":"#/components/schemas/`+a.ResultName()+`"`) {
			t.Errorf("%s: no response schema %s", a.Name, a.ResultName())
		}
	}
}

// TestResponsesMatchOpenAPI calls every route and validates the real
// response (status, content type, body) against the document.
func TestResponsesMatchOpenAPI(t *testing.T) {
	v := openAPIValidator(t)
	srv := newServer(t, httpapi.Options{ReadToken: readTok, AdminToken: adminTok})
	fill := pathValues(t, srv)
	check := func(method, path, body string, token string) {
		t.Helper()
		var rd *strings.Reader
		if body != "" {
			rd = strings.NewReader(body)
		} else {
			rd = strings.NewReader("")
		}
		req, err := http.NewRequest(method, srv.URL+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		// The validator matches the path without the test server's host.
		vreq, _ := http.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			vreq.Header.Set("Content-Type", "application/json")
		}
		if ok, errs := v.ValidateHttpResponse(vreq, res); !ok {
			for _, e := range errs {
				t.Errorf("%s %s (%d): %s", method, path, res.StatusCode, e.Error())
				for _, se := range e.SchemaValidationErrors {
					t.Errorf("  %s: %s", se.FieldPath+" "+se.KeywordLocation, se.Reason)
				}
			}
		}
	}
	for _, a := range app.Actions() {
		q := minimal[a.Name]
		if a.Method == http.MethodGet {
			path := fill.Replace(a.Path)
			if q != "" {
				path += "?" + q
			}
			check("GET", path, "", adminTok)
		} else {
			check(a.Method, a.Path, q, adminTok)
		}
	}
	// Investigations in both forms, errors, and the health route.
	check("GET", "/api/ai/investigate?lens=skill&detail=true&all=true", "", readTok)
	check("GET", "/api/ai/investigate?lens=hook&detail=true", "", readTok)
	check("GET", "/api/ai/mcp-investigate?target=labby&detail=true", "", readTok)
	check("GET", "/api/ai/skill-incidents?limit=x", "", readTok)
	check("GET", "/api/ai/investigate?incident_id=skill-inc-0", "", readTok)
	check("GET", "/health", "", "")
}
