package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cortexhq/cortex"
)

// Scope is an authorization scope of an action.
type Scope string

// Scopes. Admin implies read.
const (
	ScopeRead  Scope = "cortex:read"
	ScopeAdmin Scope = "cortex:admin"
)

// Cost is an action's cost class: how much work one call may do.
type Cost string

// Cost classes, cheapest first.
const (
	CostCheap     Cost = "cheap"     // one indexed query
	CostModerate  Cost = "moderate"  // a candidate scan and grouping
	CostExpensive Cost = "expensive" // evidence bundles: many queries
	CostWrite     Cost = "write"     // changes the store
)

// Caller is who calls an action, through which surface, with which
// scopes.
type Caller struct {
	// Surface is cortex.SurfaceCLI, SurfaceMCP or SurfaceREST.
	Surface string
	// Scopes are the granted scopes.
	Scopes []Scope
	// Name identifies the caller in logs (token name, "stdio", address).
	Name string
}

// Has reports whether the caller holds scope (admin implies read).
func (c Caller) Has(s Scope) bool {
	return slices.Contains(c.Scopes, s) || (s == ScopeRead && slices.Contains(c.Scopes, ScopeAdmin))
}

// Action is one operation every surface exposes the same way: the MCP
// tool of that name, the REST route Method+Path, and the CLI command that
// calls the same service method.
type Action struct {
	Name        string
	Description string
	Scope       Scope
	Cost        Cost
	// Method and Path are the REST route.
	Method string
	Path   string
	// CLI is the equivalent command line (documentation).
	CLI string
	// Destructive actions delete stored data (a write action that is not
	// destructive only adds or rewrites).
	Destructive bool
	params      reflect.Type
	schema      *jsonschema.Schema
	run         func(ctx context.Context, s *Service, c Caller, p any) (any, error)
}

// define declares an action whose parameters are P (a struct with json
// tags; its JSON schema is derived from it) and whose handler is run.
func define[P any, R any](name string, scope Scope, cost Cost, method, path, cli, desc string,
	run func(ctx context.Context, s *Service, c Caller, p *P) (R, error)) Action {
	schema, err := jsonschema.For[P](nil)
	if err != nil {
		panic(fmt.Sprintf("action %s: %v", name, err)) // a programming error, caught by every test
	}
	schema.Description = desc
	return Action{Name: name, Description: desc, Scope: scope, Cost: cost, Method: method, Path: path, CLI: cli,
		params: reflect.TypeFor[P](), schema: schema,
		run: func(ctx context.Context, s *Service, c Caller, p any) (any, error) { return run(ctx, s, c, p.(*P)) }}
}

// destructive marks an action as deleting stored data.
func destructive(a Action) Action {
	a.Destructive = true
	return a
}

// Schema returns the JSON schema of the action's parameters (a copy).
func (a Action) Schema() *jsonschema.Schema { return a.schema.CloneSchemas() }

// Params lists the action's parameter names, sorted.
func (a Action) Params() []string {
	var names []string
	for _, f := range fields(a.params) {
		names = append(names, f.name)
	}
	sort.Strings(names)
	return names
}

// PathParams lists the parameters the REST route takes in its path
// ({name} segments of Path), in order.
func (a Action) PathParams() []string {
	var names []string
	for _, seg := range strings.Split(a.Path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}"))
		}
	}
	return names
}

// NewParams returns a pointer to the action's zero parameters.
func (a Action) NewParams() any { return reflect.New(a.params).Interface() }

// DecodeJSON decodes parameters from a JSON object, rejecting unknown
// fields and wrong types with an invalid error naming the parameter.
func (a Action) DecodeJSON(raw []byte) (any, error) {
	p := a.NewParams()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	if raw[0] != '{' {
		return nil, cortex.Errorf(cortex.CodeInvalid, "%s: parameters must be a JSON object", a.Name)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, a.paramError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, cortex.Errorf(cortex.CodeInvalid, "%s: parameters must be one JSON object", a.Name)
	}
	return p, nil
}

func (a Action) paramError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	msg := err.Error()
	switch {
	case errors.As(err, &te):
		msg = fmt.Sprintf("parameter %q must be %s", te.Field, jsonKind(te.Type))
	case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
		msg = "parameters are not valid JSON: " + err.Error()
	case strings.HasPrefix(msg, "json: unknown field "):
		msg = fmt.Sprintf("unknown parameter %s (known: %s)", strings.TrimPrefix(msg, "json: unknown field "),
			strings.Join(a.Params(), ", "))
	}
	return cortex.Errorf(cortex.CodeInvalid, "%s: %s", a.Name, msg)
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of strings"
	}
	return "a string"
}

type field struct {
	name  string
	index []int
	typ   reflect.Type
}

// fields lists the JSON-named fields of a params struct (embedded structs
// flattened, as encoding/json does).
func fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for _, sub := range fields(f.Type) {
				sub.index = append([]int{i}, sub.index...)
				out = append(out, sub)
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, field{name: name, index: []int{i}, typ: f.Type})
	}
	return out
}

// DecodeQuery decodes parameters from URL query values: each parameter by
// its JSON name, lists as repeated keys (signals=a&signals=b) or comma
// separated, numbers and booleans parsed. Unknown keys are rejected.
func (a Action) DecodeQuery(q url.Values) (any, error) {
	p := a.NewParams()
	v := reflect.ValueOf(p).Elem()
	byName := map[string]field{}
	for _, f := range fields(a.params) {
		byName[f.name] = f
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vals := q[k]
		f, ok := byName[k]
		if !ok {
			return nil, cortex.Errorf(cortex.CodeInvalid, "%s: unknown parameter %q (known: %s)", a.Name, k, strings.Join(a.Params(), ", "))
		}
		dst := v.FieldByIndex(f.index)
		t := f.typ
		if t.Kind() == reflect.Slice {
			var list []string
			for _, s := range vals {
				for _, part := range strings.Split(s, ",") {
					if part = strings.TrimSpace(part); part != "" {
						list = append(list, part)
					}
				}
			}
			dst.Set(reflect.ValueOf(list))
			continue
		}
		if len(vals) != 1 {
			return nil, cortex.Errorf(cortex.CodeInvalid, "%s: parameter %q given %d times", a.Name, k, len(vals))
		}
		if t.Kind() == reflect.Pointer {
			dst.Set(reflect.New(t.Elem()))
			dst, t = dst.Elem(), t.Elem()
		}
		s := vals[0]
		switch t.Kind() {
		case reflect.String:
			dst.SetString(s)
		case reflect.Int, reflect.Int64:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, cortex.Errorf(cortex.CodeInvalid, "%s: parameter %q must be an integer, got %q", a.Name, k, s)
			}
			dst.SetInt(n)
		case reflect.Float64:
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, cortex.Errorf(cortex.CodeInvalid, "%s: parameter %q must be a number, got %q", a.Name, k, s)
			}
			dst.SetFloat(x)
		case reflect.Bool:
			b, err := strconv.ParseBool(s)
			if err != nil {
				return nil, cortex.Errorf(cortex.CodeInvalid, "%s: parameter %q must be true or false, got %q", a.Name, k, s)
			}
			dst.SetBool(b)
		default:
			return nil, cortex.Errorf(cortex.CodeInternal, "%s: parameter %q has an unsupported type", a.Name, k)
		}
	}
	return p, nil
}

// Call runs an action for a caller: the scope is checked before any other
// work, then the decoded parameters go to the service; an oversized
// investigation is cut to MaxResultBytes (see bound).
func (s *Service) Call(ctx context.Context, c Caller, a Action, params any) (any, error) {
	if !c.Has(a.Scope) {
		return nil, cortex.Errorf(cortex.CodeForbidden, "forbidden: %s requires scope %s", a.Name, a.Scope)
	}
	if params == nil {
		params = a.NewParams()
	}
	if reflect.TypeOf(params) != reflect.PointerTo(a.params) {
		return nil, cortex.Errorf(cortex.CodeInternal, "%s: parameters of type %T", a.Name, params)
	}
	res, err := a.run(ctx, s, c, params)
	if err != nil {
		return nil, err
	}
	return bound(res), nil
}

// Actions returns the registry, in documentation order.
func Actions() []Action { return registry }

// ActionByName finds an action.
func ActionByName(name string) (Action, error) {
	for _, a := range registry {
		if a.Name == name {
			return a, nil
		}
	}
	names := make([]string, len(registry))
	for i, a := range registry {
		names[i] = a.Name
	}
	return Action{}, cortex.Errorf(cortex.CodeNotFound, "unknown action %q (actions: %s)", name, strings.Join(names, ", "))
}
