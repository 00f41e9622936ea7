// Package workflow runs stage workflows: a state machine (SM) whose stages
// each run the agent loop on a fork of a strata session, with the stage's
// rendered body as the system prompt, its allowedTools as the tool
// envelope, a completion tool handing its result back, and a turn cap;
// an Assert after each stage decides ok, retry or fail, and Exit writes the
// stage's state slot to the session store so a killed workflow resumes from
// its last completed stage (docs/workflows.md).
package workflow

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"
)

// SchemaJSON is the JSON Schema of a workflow definition (workflow/schema.json),
// checked by Parse before anything else.
//
//go:embed schema.json
var SchemaJSON []byte

// End is the transition target that ends the workflow.
const End = "end"

// DefaultTurnCap is a stage's continuation cap when turnCap is not given,
// in rounds of tool results sent back to the model.
const DefaultTurnCap = 20

// Definition is a parsed workflow file (docs/workflows.md, "format").
type Definition struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Inputs      []Input `json:"inputs,omitempty"`
	// Stages are the top-level stages and parallel groups, in order.
	Stages []Stage `json:"stages"`

	// File is the path the definition was read from ("" when parsed from
	// bytes without one); Source is its text.
	File   string `json:"-"`
	Source []byte `json:"-"`
}

// Input is one named input of a workflow.
type Input struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Default     string `json:"default,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Stage is a stage, or a parallel group when Parallel is set.
type Stage struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	Body         string          `json:"body,omitempty"`
	Prompt       string          `json:"prompt,omitempty"`
	AllowedTools []string        `json:"allowedTools,omitempty"`
	TurnCap      int             `json:"turnCap,omitempty"`
	Completion   json.RawMessage `json:"completion,omitempty"`
	Check        *Check          `json:"check,omitempty"`
	Assert       *Assert         `json:"assert,omitempty"`
	Retries      int             `json:"retries,omitempty"`
	Grants       []Grant         `json:"grants,omitempty"`
	Next         Transitions     `json:"next,omitzero"`

	// Parallel are a group's siblings, run concurrently; Join runs after
	// them all.
	Parallel []Stage `json:"parallel,omitempty"`
	Join     *Stage  `json:"join,omitempty"`

	body, prompt, check, judge *template.Template
	completion                 *jsonschema.Resolved
}

// Check is a stage's check gate (a precondition).
type Check struct {
	If      string `json:"if,omitempty"`
	Command string `json:"command,omitempty"`
}

// Assert says how a stage's outcome is decided after Act.
type Assert struct {
	Command string `json:"command,omitempty"`
	Judge   string `json:"judge,omitempty"`
}

// Grant is a grantStageTool token given in the definition: Uses calls of
// Tool outside the stage's allowedTools (default 1).
type Grant struct {
	Tool string `json:"tool"`
	Uses int    `json:"uses,omitempty"`
}

// Transitions name the entry each outcome leads to ("" = the default:
// ok → the next entry, retry → the same stage, fail → end the workflow as
// failed).
type Transitions struct {
	OK    string `json:"ok,omitempty"`
	Retry string `json:"retry,omitempty"`
	Fail  string `json:"fail,omitempty"`
}

// IsGroup reports whether s is a parallel group.
func (s *Stage) IsGroup() bool { return len(s.Parallel) > 0 }

// Load reads and parses the workflow file at path (see Parse).
func Load(path string) (*Definition, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return Parse(path, b)
}

// Error is a definition error: the file, the line (0 when unknown), the
// field (a JSON pointer such as /stages/1/turnCap) and what is wrong.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

var schema = func() *jsonschema.Resolved {
	var s jsonschema.Schema
	if err := json.Unmarshal(SchemaJSON, &s); err != nil {
		panic("workflow/schema.json: " + err.Error())
	}
	r, err := s.Resolve(nil)
	if err != nil {
		panic("workflow/schema.json: " + err.Error())
	}
	return r
}()

// Parse parses a workflow definition in YAML (JSON is YAML too): it checks
// it against SchemaJSON, then the references the schema cannot check
// (unique names, transition targets, templates, completion schemas). Every
// error is an *Error naming file, line and field.
func Parse(file string, src []byte) (*Definition, error) {
	if file == "" {
		file = "workflow"
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		line := 0
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		return nil, &Error{File: file, Line: line, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	lines := map[string]int{}
	indexLines(&root, "", lines)
	bad := func(field, format string, args ...any) error {
		return &Error{File: file, Line: lineOf(lines, field), Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	var doc any
	if err := root.Decode(&doc); err != nil {
		return nil, bad("", "%v", err)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, bad("", "cannot be read as JSON: %v", err)
	}
	var inst any
	if err := json.Unmarshal(j, &inst); err != nil {
		return nil, bad("", "%v", err)
	}
	if err := schema.Validate(inst); err != nil {
		field, msg := locate(inst, err)
		return nil, bad(field, "%s (the format: workflow/schema.json, docs/workflows.md)", msg)
	}
	d := &Definition{File: file, Source: src}
	if err := json.Unmarshal(j, d); err != nil {
		return nil, bad("", "%v", err)
	}
	if err := d.check(bad); err != nil {
		return nil, err
	}
	return d, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// indexLines records the line of every node under n by its JSON pointer.
func indexLines(n *yaml.Node, path string, lines map[string]int) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			indexLines(c, path, lines)
		}
		return
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := path + "/" + n.Content[i].Value
			lines[p] = n.Content[i].Line
			indexLines(n.Content[i+1], p, lines)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := path + "/" + strconv.Itoa(i)
			lines[p] = c.Line
			indexLines(c, p, lines)
		}
	}
	if _, ok := lines[path]; !ok {
		lines[path] = n.Line
	}
}

// lineOf returns the line of field, or of its nearest ancestor present.
func lineOf(lines map[string]int, field string) int {
	for {
		if l, ok := lines[field]; ok {
			return l
		}
		i := strings.LastIndex(field, "/")
		if i < 0 {
			return 0
		}
		field = field[:i]
	}
}

// check does what the schema cannot: names unique, targets known,
// templates and completion schemas valid, inputs unique.
func (d *Definition) check(bad func(field, format string, args ...any) error) error {
	inputs := map[string]bool{}
	for i, in := range d.Inputs {
		if inputs[in.Name] {
			return bad(fmt.Sprintf("/inputs/%d/name", i), "input %q is declared twice", in.Name)
		}
		inputs[in.Name] = true
	}
	names := map[string]string{}
	top := map[string]bool{End: true}
	for i := range d.Stages {
		top[d.Stages[i].Name] = true
	}
	var stage func(s *Stage, field string) error
	stage = func(s *Stage, field string) error {
		if s.Name == End {
			return bad(field+"/name", "%q is the transition that ends the workflow; name the stage otherwise", End)
		}
		if prev, ok := names[s.Name]; ok {
			return bad(field+"/name", "stage name %q is already used at %s; names must be unique", s.Name, prev)
		}
		names[s.Name] = field
		for _, t := range []struct{ key, to string }{{"ok", s.Next.OK}, {"retry", s.Next.Retry}, {"fail", s.Next.Fail}} {
			if t.to != "" && !top[t.to] {
				return bad(field+"/next/"+t.key, "%q is not a top-level stage or group (nor %q)", t.to, End)
			}
		}
		if s.IsGroup() {
			for i := range s.Parallel {
				if s.Parallel[i].Next != (Transitions{}) {
					return bad(fmt.Sprintf("%s/parallel/%d/next", field, i), "a sibling has no transitions of its own: its group's next applies (drop next here)")
				}
				if err := stage(&s.Parallel[i], fmt.Sprintf("%s/parallel/%d", field, i)); err != nil {
					return err
				}
			}
			if s.Join != nil {
				if s.Join.Next != (Transitions{}) {
					return bad(field+"/join/next", "a join has no transitions of its own: its group's next applies (drop next here)")
				}
				return stage(s.Join, field+"/join")
			}
			return nil
		}
		var err error
		parse := func(key, text string) *template.Template {
			if text == "" || err != nil {
				return nil
			}
			t, perr := template.New(s.Name + "." + key).Option("missingkey=error").Parse(text)
			if perr != nil {
				err = bad(field+"/"+key, "not a valid template: %v", perr)
			}
			return t
		}
		s.body, s.prompt = parse("body", s.Body), parse("prompt", s.Prompt)
		if s.Check != nil {
			s.check = parse("check", s.Check.If)
			if s.Check.If == "" && s.Check.Command == "" {
				return bad(field+"/check", "give if (a template rendering to true) or command (a shell command), or drop check")
			}
		}
		if s.Assert != nil {
			s.judge = parse("assert/judge", s.Assert.Judge)
		}
		if err != nil {
			return err
		}
		schemaText := s.Completion
		if len(schemaText) == 0 {
			schemaText = json.RawMessage(defaultCompletion)
		}
		var cs jsonschema.Schema
		if err := json.Unmarshal(schemaText, &cs); err != nil {
			return bad(field+"/completion", "not a JSON Schema: %v", err)
		}
		if cs.Type != "object" {
			return bad(field+"/completion", "type is %q; a completion schema is a tool's input, so its type must be object", cs.Type)
		}
		if s.completion, err = cs.Resolve(nil); err != nil {
			return bad(field+"/completion", "not a valid JSON Schema: %v", err)
		}
		for i, g := range s.Grants {
			if g.Uses == 0 {
				s.Grants[i].Uses = 1
			}
		}
		return nil
	}
	for i := range d.Stages {
		if err := stage(&d.Stages[i], fmt.Sprintf("/stages/%d", i)); err != nil {
			return err
		}
	}
	return nil
}

// defaultCompletion is the completion schema of a stage that gives none.
const defaultCompletion = `{"type":"object","properties":{"result":{"type":"string","description":"What the stage did or found."}},"required":["result"]}`

// render executes t over c (the empty string for a nil template).
func render(t *template.Template, c *StageContext) (string, error) {
	if t == nil {
		return "", nil
	}
	var b bytes.Buffer
	if err := t.Execute(&b, c); err != nil {
		return "", fmt.Errorf("render %s: %w", t.Name(), err)
	}
	return b.String(), nil
}

// find returns the top-level entry named name and its index.
func (d *Definition) find(name string) (*Stage, int) {
	for i := range d.Stages {
		if d.Stages[i].Name == name {
			return &d.Stages[i], i
		}
	}
	return nil, -1
}

// Resolve checks inputs against the definition (unknown names, missing
// required ones) and fills defaults.
func (d *Definition) Resolve(inputs map[string]string) (map[string]string, error) {
	out := map[string]string{}
	known := map[string]bool{}
	var missing []string
	for _, in := range d.Inputs {
		known[in.Name] = true
		v, ok := inputs[in.Name]
		if !ok {
			v = in.Default
			if in.Required {
				missing = append(missing, in.Name)
			}
		}
		out[in.Name] = v
	}
	for k := range inputs {
		if !known[k] {
			return nil, fmt.Errorf("workflow %s: unknown input %q (declared: %v)", d.Name, k, inputNames(d.Inputs))
		}
	}
	if len(missing) > 0 {
		return nil, errors.New("workflow " + d.Name + ": missing required input(s) " + strings.Join(missing, ", ") + " (pass --input NAME=VALUE)")
	}
	return out, nil
}

func inputNames(in []Input) []string {
	var n []string
	for _, i := range in {
		n = append(n, i.Name)
	}
	return n
}
