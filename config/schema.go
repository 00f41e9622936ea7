package config

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// AgentSchemaV1 is the JSON Schema of the agent file, schemas/agent-v1.json of
// the Amazon Q Developer CLI, embedded unchanged so validation needs no files
// at run time.
//
// Source: https://github.com/aws/amazon-q-developer-cli, commit
// 15cc8f3cd18c4272925ce1c7053268eedff1ea0a, schemas/agent-v1.json.
// License: dual MIT / Apache-2.0, Copyright (c) 2024 Amazon.com, Inc. or its
// affiliates (see schema/SOURCE.md).
//
//go:embed schema/agent-v1.json
var AgentSchemaV1 []byte

// SchemaError is returned by [LoadAgent] when the agent file does not match
// the agent schema. Its message names the file, the JSON pointer of the
// offending value and what was expected, e.g.
//
//	agent /p/.kiro/agents/a.json: /hooks/preToolUse/0/timeout_ms: expected integer, got string "soon"
type SchemaError struct {
	// File is the absolute path of the agent file.
	File string
	// Pointer is the RFC 6901 JSON pointer of the offending value; "" is the
	// document itself.
	Pointer string
	// Expected describes what the schema wants there: a JSON type such as
	// "integer" or "string", `property "command"`, `string matching "…"`, ….
	Expected string
	// Got describes the value found, e.g. `string "soon"`.
	Got string
	// Err is the validator's own error (github.com/google/jsonschema-go).
	Err error
}

// Error implements error.
func (e *SchemaError) Error() string {
	p := e.Pointer
	if p == "" {
		p = "(document)"
	}
	return fmt.Sprintf("agent %s: %s: expected %s, got %s", e.File, p, e.Expected, e.Got)
}

// Unwrap returns the validator's error.
func (e *SchemaError) Unwrap() error { return e.Err }

// compiledSchema is the agent schema with kiro's documented extensions, as a
// generic tree (for locating errors) and resolved for jsonschema-go.
type compiledSchema struct {
	tree     map[string]any
	resolved *jsonschema.Resolved
}

var (
	schemaOnce sync.Once
	schemaC    *compiledSchema
	schemaErr  error
)

// agentSchema returns the compiled, extended agent schema.
func agentSchema() (*compiledSchema, error) {
	schemaOnce.Do(func() {
		var tree map[string]any
		if err := json.Unmarshal(AgentSchemaV1, &tree); err != nil {
			schemaErr = fmt.Errorf("embedded agent-v1.json: %w", err)
			return
		}
		extendSchema(tree)
		b, err := json.Marshal(tree)
		if err != nil {
			schemaErr = err
			return
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			schemaErr = fmt.Errorf("agent schema: %w", err)
			return
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			schemaErr = fmt.Errorf("agent schema: %w", err)
			return
		}
		schemaC = &compiledSchema{tree: tree, resolved: rs}
	})
	return schemaC, schemaErr
}

// extendSchema adds to agent-v1.json what the Amazon Q / kiro docs and real
// agent files use but the v1 schema lags behind on:
//   - name is optional, derived from the file name (agent-format.md "name");
//   - unknown top-level fields are accepted (and kept; LoadAgent warns), and
//     includeMcpJson, welcomeMessage, keyboardShortcut are typed (kiro CLI
//     configuration reference);
//   - resources may be skill:// URIs (docs/kiro.md, rule 14) and knowledge-base
//     objects (kiro "Knowledge base resources");
//   - hooks preToolUse, postToolUse, stop, and hook fields matcher,
//     timeout_ms, cache_ttl_seconds, max_output_size (hooks.md);
//   - MCP servers need command or url (remote servers, the-agent-format-2.md),
//     and may carry autoApprove / disabledTools (kiro MCP configuration).
func extendSchema(root map[string]any) {
	delete(root, "additionalProperties")
	delete(root, "required")
	props := obj(root, "properties")
	props["includeMcpJson"] = map[string]any{"type": "boolean"}
	props["welcomeMessage"] = map[string]any{"type": []any{"string", "null"}}
	props["keyboardShortcut"] = map[string]any{"type": []any{"string", "null"}}

	res := obj(props, "resources")
	res["items"] = map[string]any{"type": []any{"string", "object"}, "pattern": "^(file|skill)://"}

	hooks := obj(obj(props, "hooks"), "properties")
	for _, ev := range []string{HookPreToolUse, HookPostToolUse, HookStop} {
		hooks[ev] = map[string]any{"$ref": "#/definitions/hookCommands"}
	}
	hookProps := obj(obj(obj(obj(root, "definitions"), "hookCommands"), "items"), "properties")
	hookProps["matcher"] = map[string]any{"type": "string"}
	for _, k := range []string{"timeout_ms", "cache_ttl_seconds", "max_output_size"} {
		hookProps[k] = map[string]any{"type": "integer", "minimum": 0}
	}

	srv := obj(obj(props, "mcpServers"), "additionalProperties")
	delete(srv, "required")
	srv["anyOf"] = []any{
		map[string]any{"required": []any{"command"}},
		map[string]any{"required": []any{"url"}},
	}
	srvProps := obj(srv, "properties")
	strArray := map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	srvProps["autoApprove"] = strArray
	srvProps["disabledTools"] = strArray
}

// obj returns m[k] as an object, creating it when absent or not an object.
func obj(m map[string]any, k string) map[string]any {
	if v, ok := m[k].(map[string]any); ok {
		return v
	}
	v := map[string]any{}
	m[k] = v
	return v
}

// validateAgentJSON validates the decoded document inst. It never panics.
func validateAgentJSON(file string, inst any) (err error) {
	cs, err := agentSchema()
	if err != nil {
		return fmt.Errorf("agent %s: %w", file, err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("agent %s: schema validation failed: %v", file, r)
		}
	}()
	verr := cs.resolved.Validate(inst)
	if verr == nil {
		return nil
	}
	loc := &locator{root: cs.tree}
	if f := loc.find(inst, cs.tree, ""); f != nil {
		return &SchemaError{File: file, Pointer: f.pointer, Expected: f.expected, Got: f.got, Err: verr}
	}
	return &SchemaError{File: file, Expected: "a document valid against agent-v1.json", Got: verr.Error(), Err: verr}
}

// failure is one schema violation found by locator.
type failure struct{ pointer, expected, got string }

// locator walks an instance and the generic schema tree side by side to find
// the deepest failing value and its JSON pointer (jsonschema-go reports schema
// locations, not instance locations). It covers the keywords agent-v1.json
// and its extensions use.
type locator struct {
	root  map[string]any
	depth int
}

func (l *locator) find(inst any, s map[string]any, ptr string) *failure {
	l.depth++
	defer func() { l.depth-- }()
	if s == nil || l.depth > 64 {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		return l.find(inst, l.deref(ref), ptr)
	}
	got := jsonTypeOf(inst)
	if want := schemaTypes(s["type"]); len(want) > 0 && !typeIn(got, want) {
		return &failure{ptr, strings.Join(want, " or "), describe(inst)}
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, inst) {
		return &failure{ptr, fmt.Sprintf("%q", fmt.Sprint(c)), describe(inst)}
	}
	if alts, ok := s["oneOf"].([]any); ok && !l.anyPasses(inst, alts, ptr) {
		return &failure{ptr, "one of " + describeAlts(alts), describe(inst)}
	}
	if alts, ok := s["anyOf"].([]any); ok && !l.anyPasses(inst, alts, ptr) {
		return &failure{ptr, "one of " + describeAlts(alts), describe(inst)}
	}
	switch v := inst.(type) {
	case string:
		if p, ok := s["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err == nil && !re.MatchString(v) {
				return &failure{ptr, fmt.Sprintf("string matching %q", p), describe(inst)}
			}
		}
	case float64:
		if m, ok := toFloat(s["minimum"]); ok && v < m {
			return &failure{ptr, fmt.Sprintf("number >= %v", m), describe(inst)}
		}
	case []any:
		if it, ok := s["items"].(map[string]any); ok {
			for i, e := range v {
				if f := l.find(e, it, ptr+"/"+strconv.Itoa(i)); f != nil {
					return f
				}
			}
		}
		if u, _ := s["uniqueItems"].(bool); u {
			for i := range v {
				for j := 0; j < i; j++ {
					if jsonEqual(v[i], v[j]) {
						return &failure{ptr + "/" + strconv.Itoa(i), "unique items", "a repeat of item " + strconv.Itoa(j)}
					}
				}
			}
		}
	case map[string]any:
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, _ := r.(string); name != "" {
					if _, ok := v[name]; !ok {
						return &failure{ptr, fmt.Sprintf("property %q", name), "none"}
					}
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := ptr + "/" + escapePointer(k)
			if ps, ok := props[k].(map[string]any); ok {
				if f := l.find(v[k], ps, sub); f != nil {
					return f
				}
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					return &failure{sub, "no such property", describe(v[k])}
				}
			case map[string]any:
				if f := l.find(v[k], ap, sub); f != nil {
					return f
				}
			}
		}
	}
	return nil
}

func (l *locator) anyPasses(inst any, alts []any, ptr string) bool {
	for _, a := range alts {
		if as, ok := a.(map[string]any); ok && l.find(inst, as, ptr) == nil {
			return true
		}
	}
	return len(alts) == 0
}

// deref resolves a local "#/a/b" reference in the root schema.
func (l *locator) deref(ref string) map[string]any {
	cur := any(l.root)
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	m, _ := cur.(map[string]any)
	return m
}

func describeAlts(alts []any) string {
	var parts []string
	for _, a := range alts {
		m, _ := a.(map[string]any)
		switch {
		case m["const"] != nil:
			parts = append(parts, fmt.Sprintf("%q", fmt.Sprint(m["const"])))
		case m["required"] != nil:
			req, _ := m["required"].([]any)
			for _, r := range req {
				parts = append(parts, fmt.Sprintf("property %q", fmt.Sprint(r)))
			}
		case m["type"] != nil:
			parts = append(parts, strings.Join(schemaTypes(m["type"]), " or "))
		}
	}
	return strings.Join(parts, ", ")
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

func schemaTypes(t any) []string {
	switch v := t.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func typeIn(got string, want []string) bool {
	for _, w := range want {
		if w == got || (w == "number" && got == "integer") {
			return true
		}
	}
	return false
}

// jsonTypeOf names the JSON type of a value decoded by encoding/json into any.
func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if _, frac := math.Modf(x); frac == 0 {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// describe renders a value for an error message: its type and a short preview.
func describe(v any) string {
	t := jsonTypeOf(v)
	switch t {
	case "array", "object":
		return t
	case "null":
		return "null"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return t + " " + s
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
