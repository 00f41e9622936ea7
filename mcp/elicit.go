package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation is a server's request for input from the person (MCP
// elicitation/create, form mode; docs/mcp-auth.md, "Elicitation").
type Elicitation struct {
	Server  string  // the server's name
	Message string  // what the server asks, to show as is
	Fields  []Field // the form, sorted by name; empty for a plain confirmation
	// Schema is the requested schema as the server sent it (JSON), for
	// front ends that pass the form on (ACP); nil when none.
	Schema json.RawMessage
}

// Field is one property of an elicitation form: the MCP spec allows only
// flat string, number, integer and boolean properties, enums, and arrays of
// enum values (multi-select).
type Field struct {
	Name        string
	Title       string
	Description string
	Type        string   // "string", "number", "integer", "boolean" or "array"
	Enum        []string // allowed values (for "array": of each item); nil = any
	Default     any      // the schema's default, nil when none
	Required    bool
}

// ElicitAnswer is the person's answer.
type ElicitAnswer struct {
	// Action is "accept", "decline" or "cancel" (the MCP spec's three).
	Action string
	// Content holds the accepted values by field name; a field left out
	// gets its schema default (SEP-1034) before the answer is sent.
	Content map[string]any
}

// Elicitor puts an Elicitation to the person. Front ends implement it
// (chat, run, ACP); an error is returned to the server as a JSON-RPC error.
type Elicitor interface {
	Elicit(ctx context.Context, e Elicitation) (ElicitAnswer, error)
}

// ElicitFunc is an Elicitor function.
type ElicitFunc func(ctx context.Context, e Elicitation) (ElicitAnswer, error)

// Elicit calls f.
func (f ElicitFunc) Elicit(ctx context.Context, e Elicitation) (ElicitAnswer, error) {
	return f(ctx, e)
}

// AcceptDefaults is an Elicitor that accepts every form with its schema
// defaults, asking no one (STRATA_ELICIT=defaults: scripts and the MCP
// conformance suite).
var AcceptDefaults = ElicitFunc(func(context.Context, Elicitation) (ElicitAnswer, error) {
	return ElicitAnswer{Action: "accept", Content: map[string]any{}}, nil
})

// Decline is an Elicitor for where no person can answer: it declines and
// reports why through warn (nil = silent).
func Decline(warn func(string), why string) Elicitor {
	return ElicitFunc(func(_ context.Context, e Elicitation) (ElicitAnswer, error) {
		if warn != nil {
			warn(fmt.Sprintf("MCP server %q asked for input (%q); declined: %s", e.Server, e.Message, why))
		}
		return ElicitAnswer{Action: "decline"}, nil
	})
}

// onElicit is the go-sdk's ElicitationHandler: it converts the request to
// an Elicitation for Options.Elicit. The go-sdk validates the answer
// against the schema and applies its defaults.
func (m *Manager) onElicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	name := "?"
	m.mu.Lock()
	for _, s := range m.servers {
		if s.session == req.Session {
			name = s.name
		}
	}
	m.mu.Unlock()
	p := req.Params
	if p.Mode == "url" {
		return nil, fmt.Errorf("strata does not offer URL elicitation (asked to open %s)", p.URL)
	}
	fields, schema, err := formFields(p.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("elicitation from %q: %w", name, err)
	}
	a, err := m.opts.Elicit.Elicit(ctx, Elicitation{Server: name, Message: p.Message, Fields: fields, Schema: schema})
	if err != nil {
		return nil, err
	}
	switch a.Action {
	case "accept":
		if a.Content == nil {
			a.Content = map[string]any{} // so that the go-sdk applies the defaults
		}
	case "decline", "cancel":
		a.Content = nil
	default:
		return nil, fmt.Errorf("elicitation answer action %q is not accept, decline or cancel", a.Action)
	}
	return &sdk.ElicitResult{Action: a.Action, Content: a.Content}, nil
}

// formFields reads an elicitation's requestedSchema; it returns the fields
// and the schema as JSON.
func formFields(schema any) ([]Field, json.RawMessage, error) {
	if schema == nil {
		return nil, nil, nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, nil, err
	}
	type option struct {
		Const any `json:"const"`
	}
	type prop struct {
		Type        string   `json:"type"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Enum        []any    `json:"enum"`
		OneOf       []option `json:"oneOf"`
		AnyOf       []option `json:"anyOf"`
		Default     any      `json:"default"`
		Items       *prop    `json:"items"`
	}
	var s struct {
		Properties map[string]prop `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, nil, fmt.Errorf("requestedSchema: %w", err)
	}
	values := func(p prop) []string {
		var out []string
		for _, v := range p.Enum {
			out = append(out, fmt.Sprint(v))
		}
		for _, o := range append(p.OneOf, p.AnyOf...) {
			out = append(out, fmt.Sprint(o.Const))
		}
		return out
	}
	var out []Field
	for name, p := range s.Properties {
		f := Field{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Default: p.Default, Enum: values(p)}
		if p.Items != nil {
			f.Enum = values(*p.Items)
		}
		for _, r := range s.Required {
			f.Required = f.Required || r == name
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, b, nil
}

// LinePrompt is an Elicitor that asks on a line terminal: it shows the
// message, asks whether to answer (y = accept, n = decline, empty or EOF =
// cancel), then asks each field, an empty line keeping the default (or
// leaving an optional field out). A value that does not parse is asked again.
type LinePrompt struct {
	In  *bufio.Reader
	Out io.Writer
	// Next, when set, reads the lines instead of In (a front end whose own
	// reader owns the input, as chat's line mode).
	Next func(context.Context) (string, error)
}

// Elicit asks e on p.Out and reads the answers from p.In.
func (p LinePrompt) Elicit(ctx context.Context, e Elicitation) (ElicitAnswer, error) {
	fmt.Fprintf(p.Out, "\nMCP server %q asks: %s\n", e.Server, e.Message)
	fmt.Fprint(p.Out, "Answer? [y]es / [n]o (decline) / empty to cancel: ")
	line, err := p.line(ctx)
	if err != nil || line == "" {
		return ElicitAnswer{Action: "cancel"}, nil
	}
	if c := strings.ToLower(line)[0]; c != 'y' {
		return ElicitAnswer{Action: "decline"}, nil
	}
	content := map[string]any{}
	for _, f := range e.Fields {
		for {
			fmt.Fprintf(p.Out, "  %s", f.Label())
			line, err := p.line(ctx)
			if err != nil {
				return ElicitAnswer{Action: "cancel"}, nil
			}
			if line == "" {
				if f.Default == nil && f.Required {
					fmt.Fprintln(p.Out, "  (required)")
					continue
				}
				break // the default is applied after
			}
			v, err := f.Parse(line)
			if err != nil {
				fmt.Fprintf(p.Out, "  %v\n", err)
				continue
			}
			content[f.Name] = v
			break
		}
	}
	return ElicitAnswer{Action: "accept", Content: content}, nil
}

// Label is the field as a prompt: title (name) — description [type:
// values] (default D), ending in ": ".
func (f Field) Label() string {
	l := f.Name
	if f.Title != "" {
		l = f.Title + " (" + f.Name + ")"
	}
	if f.Description != "" {
		l += " — " + f.Description
	}
	if f.Type != "" {
		l += " [" + f.Type
		if len(f.Enum) > 0 {
			l += ": " + strings.Join(f.Enum, "|")
		}
		l += "]"
	}
	if f.Default != nil {
		l += fmt.Sprintf(" (default %v)", f.Default)
	}
	return l + ": "
}

// Parse reads a typed answer: an integer, number or boolean as such, an
// array as comma-separated values; a value outside Enum is an error naming
// the allowed ones.
func (f Field) Parse(s string) (any, error) {
	oneOf := func(v string) error {
		if len(f.Enum) == 0 {
			return nil
		}
		for _, e := range f.Enum {
			if e == v {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(f.Enum, ", "))
	}
	switch f.Type {
	case "integer":
		return strconv.ParseInt(s, 10, 64)
	case "number":
		return strconv.ParseFloat(s, 64)
	case "boolean":
		return strconv.ParseBool(s)
	case "array":
		var out []any
		for _, v := range strings.Split(s, ",") {
			v = strings.TrimSpace(v)
			if err := oneOf(v); err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return s, oneOf(s)
}

// line reads one line, or fails when ctx ends first.
func (p LinePrompt) line(ctx context.Context) (string, error) {
	if p.Next != nil {
		s, err := p.Next(ctx)
		return strings.TrimSpace(s), err
	}
	type res struct {
		s   string
		err error
	}
	c := make(chan res, 1)
	go func() {
		s, err := p.In.ReadString('\n')
		if err != nil && s == "" {
			c <- res{"", err}
			return
		}
		c <- res{strings.TrimSpace(s), nil}
	}()
	select {
	case r := <-c:
		return r.s, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
