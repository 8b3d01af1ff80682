package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
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
	// Lens is set on a lens's own incident listing or investigation
	// (skill_incidents, mcp_investigate, …): MCP clients get these through
	// the all-lens tools incidents and investigate, which take every
	// lens's subject filters, instead of one tool each (every tool listed
	// costs tokens in every agent session). REST and the CLI serve them.
	Lens string
	// Fold, when set, is the MCP tool that serves the action as one of
	// its views, with its selector parameter set to View (see Fold).
	Fold *Fold
	View string
	// NotOnMCP, when set, says why the action is no MCP tool (REST and the
	// CLI serve it).
	NotOnMCP string
	// Destructive actions delete stored data (a write action that is not
	// destructive only adds or rewrites).
	Destructive bool
	// unlisted are parameters the MCP tool accepts without listing them,
	// with why (see Action.Unlisted).
	unlisted map[string]string
	params   reflect.Type
	schema   *jsonschema.Schema
	result   *jsonschema.Schema
	// resultName names the result type in documents (OpenAPI components).
	resultName string
	run        func(ctx context.Context, s *Service, c Caller, p any) (any, error)
}

// Option adjusts an action's declaration (its schemas).
type Option func(*Action)

// Enum restricts a parameter, or each item of a list parameter, to values.
func Enum(param string, values ...string) Option {
	return func(a *Action) {
		p := a.schema.Properties[param]
		if p == nil {
			panic(fmt.Sprintf("action %s: no parameter %s to restrict", a.Name, param))
		}
		if p.Items != nil {
			p = p.Items
		}
		p.Enum = make([]any, len(values))
		for i, v := range values {
			p.Enum[i] = v
		}
	}
}

// Describe sets a parameter's description.
func Describe(param, text string) Option {
	return func(a *Action) {
		p := a.schema.Properties[param]
		if p == nil {
			panic(fmt.Sprintf("action %s: no parameter %s to describe", a.Name, param))
		}
		p.Description = text
	}
}

// ForLens marks a lens's own incident action (see Action.Lens).
func ForLens(lens string) Option { return func(a *Action) { a.Lens = lens } }

// OffMCP keeps an action off MCP, for reason.
func OffMCP(reason string) Option { return func(a *Action) { a.NotOnMCP = reason } }

// OnMCP reports whether the action is its own MCP tool.
func (a Action) OnMCP() bool { return a.Lens == "" && a.NotOnMCP == "" && a.Fold == nil }

// MCPCall returns the MCP tool that serves the action and the arguments
// that select it: its own tool (no arguments); for a lens's action the
// all-lens tool with the lens; for a folded action the fold with its
// view; "" for an action kept off MCP.
func (a Action) MCPCall() (tool string, args map[string]any) {
	switch {
	case a.OnMCP():
		return a.Name, nil
	case a.NotOnMCP != "":
		return "", nil
	case a.Fold != nil:
		return a.Fold.Tool, map[string]any{a.Fold.Param: a.View}
	case strings.HasSuffix(a.Name, "_investigate"):
		return "investigate", map[string]any{"lens": a.Lens}
	}
	return "incidents", map[string]any{"lens": []string{a.Lens}}
}

// MCPTool names the MCP tool call that serves the action, as
// documentation: "search", "incidents lens=skill", "skill view=health",
// or "" for an action kept off MCP.
func (a Action) MCPTool() string {
	tool, args := a.MCPCall()
	if tool == "" {
		return ""
	}
	return mcpCallString(tool, args)
}

// define declares an action whose parameters are P (a struct with json
// tags; its JSON schema is derived from it), whose result is R (its
// schema too, unless R is an interface: an option must then give it) and
// whose handler is run.
func define[P any, R any](name string, scope Scope, cost Cost, method, path, cli, desc string,
	run func(ctx context.Context, s *Service, c Caller, p *P) (R, error), opts ...Option) Action {
	schema, err := jsonschema.For[P](nil)
	if err != nil {
		panic(fmt.Sprintf("action %s: %v", name, err)) // a programming error, caught by every test
	}
	schema.Description = desc
	a := Action{Name: name, Description: desc, Scope: scope, Cost: cost, Method: method, Path: path, CLI: cli,
		params: reflect.TypeFor[P](), schema: schema,
		run: func(ctx context.Context, s *Service, c Caller, p any) (any, error) { return run(ctx, s, c, p.(*P)) }}
	if rt := reflect.TypeFor[R](); rt.Kind() != reflect.Interface {
		a.result, a.resultName = resultSchema[R](), typeName(rt)
	}
	for _, o := range opts {
		o(&a)
	}
	if a.result == nil {
		panic(fmt.Sprintf("action %s: no result schema", name))
	}
	return a
}

// resultSchema is the JSON schema of a result type as encoding/json
// writes it: a nil map or slice is null.
func resultSchema[R any]() *jsonschema.Schema {
	s, err := jsonschema.For[R](&jsonschema.ForOptions{TypeSchemas: customJSON})
	if err != nil {
		panic(fmt.Sprintf("result %T: %v", *new(R), err))
	}
	nullableMaps(s)
	return s
}

// customJSON are the schemas of result types with their own JSON encoding.
var customJSON = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[ingest.Duration](): {Type: "number", Description: "seconds"},
}

// nullableMaps lets every map of a generated schema be null, as a nil Go
// map encodes (the generator allows null for slices and pointers only).
func nullableMaps(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "object" && s.Properties == nil && s.AdditionalProperties != nil {
		s.Type, s.Types = "", []string{"null", "object"}
	}
	for _, p := range s.Properties {
		nullableMaps(p)
	}
	nullableMaps(s.Items)
	nullableMaps(s.AdditionalProperties)
	for _, x := range s.AnyOf {
		nullableMaps(x)
	}
}

// typeName is a document name for a Go type: its name, with the element
// type of a generic list spelled out (EventList[pkg.ToolEventRow] →
// ToolEventRowList).
func typeName(t reflect.Type) string {
	name := t.Name()
	if i := strings.IndexByte(name, '['); i >= 0 {
		inner := strings.TrimSuffix(name[i+1:], "]")
		inner = inner[strings.LastIndexByte(inner, '.')+1:]
		return inner + "List"
	}
	if name == "Result" { // assess.Result → AssessResult
		pkg := t.PkgPath()[strings.LastIndexByte(t.PkgPath(), '/')+1:]
		return strings.ToUpper(pkg[:1]) + pkg[1:] + name
	}
	return name
}

// ResultName names the result's schema in documents.
func (a Action) ResultName() string { return a.resultName }

// skillEventsResult gives skill_events its result schema: an event list
// whose events are skill events, or skill summaries with summary=true.
func skillEventsResult(a *Action) {
	a.resultName = "SkillEventsResult"
	s := resultSchema[cortex.EventList[cortex.SkillEventRow]]()
	sum := resultSchema[cortex.SkillSummary]()
	ev := s.Properties["events"]
	ev.Items = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{ev.Items, sum}}
	a.result = s
}

// destructive marks an action as deleting stored data.
func destructive(a Action) Action {
	a.Destructive = true
	return a
}

// Schema returns the JSON schema of the action's parameters (a copy).
func (a Action) Schema() *jsonschema.Schema { return a.schema.CloneSchemas() }

// ResultSchema returns the JSON schema of the action's result (a copy).
func (a Action) ResultSchema() *jsonschema.Schema { return a.result.CloneSchemas() }

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
	raw, err := a.unalias(raw)
	if err != nil {
		return nil, err
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

// Doc is the documentation of a parameter: its doc tag, else its schema
// description.
func (a Action) Doc(param string) string {
	for _, f := range fields(a.params) {
		if f.name == param && f.doc != "" {
			return f.doc
		}
	}
	if p := a.schema.Properties[param]; p != nil {
		return p.Description
	}
	return ""
}

// Unlisted says why the MCP tool of the action accepts a parameter but
// does not list it ("" when it lists it): every listed parameter costs
// tokens in every agent session. Parameters that tune the answer rather
// than select it (group gaps, correlation windows, text bounds, score
// floors; tag tuning:"true") are "tuning": the defaults suit an agent.
// A parameter can say why it is left out everywhere (tag unlisted:"why")
// and an action can leave out more (see the Unlisted option). REST, the
// CLI and the docs show them all.
func (a Action) Unlisted(param string) string {
	if why := a.unlisted[param]; why != "" {
		return why
	}
	for _, f := range fields(a.params) {
		switch {
		case f.name != param:
		case f.tuning:
			return "tuning"
		case f.unlisted != "":
			return f.unlisted
		}
	}
	return ""
}

// Unlisted keeps params out of the action's MCP tool schema, for why
// (they are still accepted; see Action.Unlisted).
func Unlisted(why string, params ...string) Option {
	return func(a *Action) {
		if a.unlisted == nil {
			a.unlisted = map[string]string{}
		}
		for _, p := range params {
			if a.schema.Properties[p] == nil {
				panic(fmt.Sprintf("action %s: no parameter %s to leave unlisted", a.Name, p))
			}
			a.unlisted[p] = why
		}
	}
}

// Aliases maps the older names parameters are still accepted under to
// their names (tool → agent).
func (a Action) Aliases() map[string]string {
	m := map[string]string{}
	for _, f := range fields(a.params) {
		if f.alias != "" {
			m[f.alias] = f.name
		}
	}
	return m
}

// unalias renames aliased keys of a JSON object to their parameter names;
// giving both names is an error.
func (a Action) unalias(raw []byte) ([]byte, error) {
	aliases := a.Aliases()
	if len(aliases) == 0 {
		return raw, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return raw, nil // the decoder reports it with context
	}
	changed := false
	for old, name := range aliases {
		v, ok := obj[old]
		if !ok {
			continue
		}
		if _, both := obj[name]; both {
			return nil, cortex.Errorf(cortex.CodeInvalid, "%s: give %s or its older name %s, not both", a.Name, name, old)
		}
		obj[name] = v
		delete(obj, old)
		changed = true
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(obj)
}

func (a Action) paramError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	msg := err.Error()
	switch {
	case errors.As(err, &te):
		field := te.Field
		if i := strings.LastIndexByte(field, '.'); i >= 0 {
			field = field[i+1:] // a parameter of an embedded group
		}
		msg = fmt.Sprintf("parameter %q must be %s", field, jsonKind(te.Type))
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
	// alias is an older name the parameter is still accepted under (tag
	// alias:"…"); it is documented, never listed in schemas.
	alias string
	// doc is the parameter's documentation (tag doc:"…"): the full
	// wording for the generated docs and the OpenAPI document; the schema
	// description (tag jsonschema:"…") is the short one tools list.
	doc string
	// tuning marks a parameter that tunes an answer rather than selects
	// it (tag tuning:"true"; see Action.Unlisted).
	tuning bool
	// unlisted says why MCP tools accept the parameter without listing it
	// (tag unlisted:"…"; see Action.Unlisted).
	unlisted string
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
		out = append(out, field{name: name, index: []int{i}, typ: f.Type, alias: f.Tag.Get("alias"), doc: f.Tag.Get("doc"),
			tuning: f.Tag.Get("tuning") == "true", unlisted: f.Tag.Get("unlisted")})
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
		if f.alias != "" {
			if _, both := q[f.alias]; both && q.Has(f.name) {
				return nil, cortex.Errorf(cortex.CodeInvalid, "%s: give %s or its older name %s, not both", a.Name, f.name, f.alias)
			}
			byName[f.alias] = f
		}
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
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
