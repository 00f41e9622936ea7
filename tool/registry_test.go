package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
)

// fakeTool is a configurable test tool.
type fakeTool struct {
	name   string
	schema string
	run    func(ctx context.Context, env *Env, input json.RawMessage) (Result, error)
}

func (f *fakeTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: f.name, Description: "test tool", InputSchema: json.RawMessage(f.schema)}
}

func (f *fakeTool) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	return f.run(ctx, env, input)
}

func TestBuiltinsRegisterWithSortedSpecs(t *testing.T) {
	r := NewRegistry(Builtins()...)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Specs() {
		names = append(names, s.Name)
		if s.Description == "" || strings.HasPrefix(s.Description, "(unavailable") {
			t.Errorf("%s: description %q", s.Name, s.Description)
		}
		if !json.Valid(s.InputSchema) {
			t.Errorf("%s: input schema is not JSON", s.Name)
		}
	}
	if got := strings.Join(names, ","); got != "execute_bash,fs_read,fs_write,glob,grep,todo_list" {
		t.Errorf("Specs order %s", got)
	}
	for _, n := range names {
		if tl, ok := r.Get(n); !ok || tl.Spec().Name != n {
			t.Errorf("Get(%q) = %v, %v", n, tl, ok)
		}
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}
}

func TestRegisterRejectsDuplicatesAndBadSpecs(t *testing.T) {
	r := NewRegistry()
	echo := &fakeTool{name: "echo", schema: `{"type":"object"}`}
	if err := r.Register(echo); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(&fakeTool{name: "echo", schema: `{}`}); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("duplicate: err = %v", err)
	}
	if err := r.Register(&fakeTool{name: "bad name!", schema: `{}`}); err == nil {
		t.Error("illegal name accepted")
	}
	if err := r.Register(&fakeTool{name: "bad_schema", schema: `{"type":7}`}); err == nil {
		t.Error("bad schema accepted")
	}
	if err := r.Register(nil); err == nil {
		t.Error("nil tool accepted")
	}
	// NewRegistry keeps going and reports instead of panicking.
	r2 := NewRegistry(echo, &fakeTool{name: "echo", schema: `{}`})
	if r2.Err() == nil || len(r2.Specs()) != 1 {
		t.Errorf("NewRegistry with a duplicate: err=%v specs=%d", r2.Err(), len(r2.Specs()))
	}
}

func TestExecuteErrorsAreToolResults(t *testing.T) {
	ws := workspace(t, nil)
	env := &Env{Workdir: ws}
	cases := []struct {
		name, tool, input string
		want              []string
	}{
		{"unknown tool", "nope", `{}`, []string{`unknown tool "nope"`, "fs_read", "glob"}},
		{"invalid JSON", "glob", `{"pattern":`, []string{"not valid JSON"}},
		{"not an object", "glob", `["*"]`, []string{"must be a JSON object"}},
		{"missing required field", "execute_bash", `{"summary":"x"}`, []string{"invalid input", "required", `"command"`}},
		{"wrong type", "execute_bash", `{"command":5}`, []string{"invalid input", "/properties/command", "integer", "string"}},
		{"wrong nested type", "fs_read", `{"operations":[{"mode":"Line","path":"a","start_line":"1"}]}`, []string{"start_line"}},
		{"enum violation", "fs_write", `{"command":"delete","path":"a"}`, []string{"/properties/command", "enum"}},
		{"missing nested required", "fs_read", `{"operations":[{"path":"a"}]}`, []string{"required", `"mode"`}},
		{"minItems", "fs_read", `{"operations":[]}`, []string{"minItems"}},
		{"grep minimum", "grep", `{"pattern":"x","max_results":0}`, []string{"max_results", "minimum"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			failed(t, call(t, env, c.tool, c.input), c.want...)
		})
	}
}

func TestExecuteRecoversPanics(t *testing.T) {
	r := NewRegistry(&fakeTool{name: "boom", schema: `{"type":"object"}`,
		run: func(context.Context, *Env, json.RawMessage) (Result, error) { panic("kaboom") }})
	failed(t, callWith(t, r, nil, "boom", `{}`), "boom", "kaboom")
}

func TestExecuteReportsToolErrorsAndEmptyOutput(t *testing.T) {
	r := NewRegistry(
		&fakeTool{name: "fails", schema: `{"type":"object"}`,
			run: func(context.Context, *Env, json.RawMessage) (Result, error) {
				return Result{}, errors.New("disk on fire")
			}},
		&fakeTool{name: "silent", schema: ``,
			run: func(context.Context, *Env, json.RawMessage) (Result, error) { return Result{}, nil }},
		&fakeTool{name: "slow", schema: `{}`,
			run: func(ctx context.Context, _ *Env, _ json.RawMessage) (Result, error) {
				<-ctx.Done()
				return Result{}, ctx.Err()
			}},
	)
	failed(t, callWith(t, r, nil, "fails", `{}`), "disk on fire")
	if s := ok(t, callWith(t, r, nil, "silent", ``)); s != "(no output)" {
		t.Errorf("empty result text %q", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	b := r.Execute(ctx, nil, llm.ToolUseBlock("id", "slow", nil))
	failed(t, b, "timed out")
	// A block that is not a tool_use is answered, not executed.
	b = r.Execute(context.Background(), nil, llm.Block{Type: llm.BlockText, ID: "x", Name: "silent"})
	if !b.IsError || b.ID != "x" {
		t.Errorf("text block executed: %+v", b)
	}
}
