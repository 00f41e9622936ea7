package workflow_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/workflow"
)

// model is a scripted model served by the replay server on 127.0.0.1
// (strata.Options.Respond): next picks each reply from the request the
// real Anthropic SDK sent; requests are counted by the stage they belong
// to (found by a marker of the stage's body in the system prompt).
type model struct {
	t       testing.TB
	markers map[string]string // stage → a phrase of its body
	next    func(stage, body string) replay.Reply
	mu      sync.Mutex
	count   map[string]int
}

func (m *model) respond(r replay.Request) replay.Response {
	body := string(r.Body)
	var req struct {
		System json.RawMessage `json:"system"`
	}
	_ = json.Unmarshal(r.Body, &req)
	stage := "?"
	for name, marker := range m.markers {
		if strings.Contains(string(req.System), marker) {
			stage = name
		}
	}
	m.mu.Lock()
	if m.count == nil {
		m.count = map[string]int{}
	}
	m.count[stage]++
	m.mu.Unlock()
	resp, err := replay.Turn(llm.APIAnthropic, m.next(stage, body))
	if err != nil {
		m.t.Errorf("author reply: %v", err)
		return replay.Response{Status: 500, Body: []byte(`{"type":"error","error":{"type":"api_error","message":"bad script"}}`)}
	}
	return resp
}

func (m *model) requests(stage string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count[stage]
}

// results counts the tool_result blocks of a request body: the rounds the
// stage's loop has made.
func results(body string) int { return strings.Count(body, `"type":"tool_result"`) }

func call(id, name, input string) replay.Reply {
	return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock(id, name, json.RawMessage(input))}}
}

func complete(id, input string) replay.Reply { return call(id, workflow.CompletionTool, input) }

// fixture copies testdata/fixmod (a Go module whose test fails) to a new
// directory.
func fixture(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "calc.go", "calc_test.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "fixmod", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// open opens a workspace in dir on m (Anthropic wire), with store.
func open(t *testing.T, dir string, m *model, store session.Store) (*strata.Workspace, *strata.Session) {
	t.Helper()
	return openWith(t, strata.Options{Dir: dir, Store: store}, m)
}

// openWith is open with more options (o.Dir and o.Store set).
func openWith(t testing.TB, o strata.Options, m *model) (*strata.Workspace, *strata.Session) {
	t.Helper()
	o.NoProjectFiles, o.ProviderName, o.Respond, o.DisableRepoContext = true, "anthropic", m.respond, true
	ws, err := strata.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	s, err := ws.NewSession(t.Context(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ws, s
}

func load(t *testing.T, name string) *workflow.Definition {
	t.Helper()
	d, err := workflow.Load(filepath.Join("..", "examples", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// recorder keeps the audit events and the stages' loop events.
type recorder struct {
	mu     sync.Mutex
	events []workflow.Event
	loop   map[string][]event.Event
}

func (r *recorder) options() workflow.Options {
	return workflow.Options{OnEvent: func(e workflow.Event) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
	}, OnLoopEvent: func(stage string, e event.Event) {
		r.mu.Lock()
		if r.loop == nil {
			r.loop = map[string][]event.Event{}
		}
		r.loop[stage] = append(r.loop[stage], e)
		r.mu.Unlock()
	}}
}

// trace returns "kind stage outcome" of every audit event (kind without
// its namespace).
func (r *recorder) trace() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		s := strings.TrimPrefix(string(e.Kind), "workflow.") + " " + e.Stage
		if e.Outcome != "" {
			s += " " + e.Outcome
		}
		out = append(out, s)
	}
	return out
}

func (r *recorder) find(kind event.Kind, stage string) []workflow.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []workflow.Event
	for _, e := range r.events {
		if e.Kind == kind && (stage == "" || e.Stage == stage) {
			out = append(out, e)
		}
	}
	return out
}
