package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/strata-agent/strata/llm"
)

// Registry maps tool names to tools, compiles each tool's input schema once
// and executes tool_use blocks. It is safe for concurrent use: Execute may run
// several calls at once, and Register may be called while others execute.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*entry
	errs  []error
}

// entry is one registered tool with its spec and compiled schema.
type entry struct {
	tool   Tool
	spec   llm.ToolSpec
	schema *jsonschema.Resolved
}

// toolName is the provider-legal tool name (Anthropic and OpenAI).
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// NewRegistry returns a registry holding tools. It never panics: a tool that
// cannot be registered (see Register) is left out, logged with slog, and its
// error is kept for Err.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: map[string]*entry{}}
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			slog.Warn("tool not registered", "err", err)
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		}
	}
	return r
}

// Err returns the errors of the tools NewRegistry left out, joined, or nil.
func (r *Registry) Err() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return errors.Join(r.errs...)
}

// Register adds t. It returns an error, and registers nothing, when t is nil,
// its name is not provider-legal (1–64 characters of [a-zA-Z0-9_-]), the name
// is already registered, or its input schema is not a JSON Schema that
// google/jsonschema-go can resolve (or, for a Func tool, cannot be derived
// from its input type). An empty input schema means {"type":"object"}.
func (r *Registry) Register(t Tool) error {
	if t == nil {
		return errors.New("tool: Register(nil)")
	}
	if se, ok := t.(interface{ specErr() error }); ok && se.specErr() != nil {
		return se.specErr()
	}
	spec := t.Spec()
	if !toolName.MatchString(spec.Name) {
		return fmt.Errorf("tool: name %q is not 1-64 characters of [a-zA-Z0-9_-]", spec.Name)
	}
	rs, err := compileSchema(spec.InputSchema)
	if err != nil {
		return fmt.Errorf("tool %s: input_schema: %w", spec.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tools == nil {
		r.tools = map[string]*entry{}
	}
	if _, dup := r.tools[spec.Name]; dup {
		return fmt.Errorf("tool %s: already registered", spec.Name)
	}
	r.tools[spec.Name] = &entry{tool: t, spec: spec, schema: rs}
	return nil
}

// compileSchema resolves a tool's input schema for validation.
func compileSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	e, ok := r.lookup(name)
	if !ok {
		return nil, false
	}
	return e.tool, true
}

func (r *Registry) lookup(name string) (*entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	return e, ok
}

// Specs returns every registered tool's spec (as captured at registration),
// sorted by name, so requests built from it are deterministic.
func (r *Registry) Specs() []llm.ToolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]llm.ToolSpec, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, e.spec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// names returns the registered names, sorted.
func (r *Registry) names() []string {
	specs := r.Specs()
	n := make([]string, len(specs))
	for i, s := range specs {
		n[i] = s.Name
	}
	return n
}

// Execute runs one tool_use block and always returns a tool_result block
// answering it (ID = call.ID). It never panics. These become is_error
// results whose text says what went wrong:
//
//   - a block that is not a tool_use, or an unknown tool name (the text lists
//     the registered tools);
//   - input that is not JSON, or not a JSON object;
//   - input that fails the tool's schema (google/jsonschema-go's message,
//     which names the schema location, e.g. /properties/command, or the
//     missing required property);
//   - a sandbox refusal, timeout, cancellation or any other error from Run;
//   - a panic in Run (recovered; the stack goes to slog, not to the model).
//
// A nil env is treated as &Env{} (the process's working directory). A
// successful result with no content gets a "(no output)" text block, since
// some providers reject empty tool results. Every result's text is capped
// at env.MaxResultBytes (DefaultMaxResultBytes) with a note saying what
// was cut: an MCP server's answer cannot flood the conversation.
func (r *Registry) Execute(ctx context.Context, env *Env, call llm.Block) (result llm.Block) {
	fail := func(format string, args ...any) llm.Block {
		return llm.ToolResultBlock(call.ID, fmt.Sprintf(format, args...), true)
	}
	defer func() {
		if p := recover(); p != nil {
			slog.Error("tool panicked", "tool", call.Name, "panic", p, "stack", string(debug.Stack()))
			result = fail("tool %s failed: internal error (panic: %v)", call.Name, p)
		}
	}()
	if call.Type != "" && call.Type != llm.BlockToolUse {
		return fail("cannot execute a %q block: only tool_use blocks call tools", call.Type)
	}
	e, ok := r.lookup(call.Name)
	if !ok {
		return fail("unknown tool %q; available tools: %s", call.Name, strings.Join(r.names(), ", "))
	}
	input := call.Input
	if len(strings.TrimSpace(string(input))) == 0 {
		input = json.RawMessage("{}")
	}
	var inst any
	if err := json.Unmarshal(input, &inst); err != nil {
		return fail("tool %s: input is not valid JSON: %v", call.Name, err)
	}
	if _, ok := inst.(map[string]any); !ok {
		return fail("tool %s: input must be a JSON object, got %s", call.Name, clip(string(input), 200))
	}
	if err := e.schema.Validate(inst); err != nil {
		return fail("tool %s: invalid input: %s", call.Name, schemaMessage(err))
	}
	if env == nil {
		env = &Env{}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return fail("tool %s not run: %v", call.Name, err)
	}
	res, err := e.tool.Run(ctx, env, input)
	limit := env.MaxResultBytes
	if limit == 0 {
		limit = DefaultMaxResultBytes
	}
	if err != nil {
		msg := err.Error()
		if errors.Is(err, context.DeadlineExceeded) && !strings.Contains(msg, "timed out") {
			msg = "timed out: " + msg
		}
		text := []llm.Block{llm.TextBlock(msg)}
		return llm.Block{Type: llm.BlockToolResult, ID: call.ID, Content: capResult(append(text, res.Content...), limit), IsError: true}
	}
	if len(res.Content) == 0 {
		res.Content = []llm.Block{llm.TextBlock("(no output)")}
	}
	return llm.Block{Type: llm.BlockToolResult, ID: call.ID, Content: capResult(res.Content, limit), IsError: res.IsError}
}

// schemaMessage shortens google/jsonschema-go's error chain: the leading
// "validating root: " adds nothing for the model.
func schemaMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "validating root: ")
}

// clip returns s cut to at most n bytes (on a rune boundary) with "…" when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// utf8RuneStart reports whether b can begin a UTF-8 encoded rune.
func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
