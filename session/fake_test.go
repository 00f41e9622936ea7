package session

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// fakeAgent emits, without a provider or tools, exactly the events agent.Agent
// emits, in agent.go's order, and keeps the history agent.Agent would hold. It
// also records, after each event, the history a crash-safe recorder must have
// on disk once it has seen that event (snap).
type fakeAgent struct {
	loopID  string   // the current loop: a new one per prompt after one that ran a turn
	loops   []string // every loop the agent ran, in order
	prev    string   // the loop loopID continues
	base    string   // the first loop's id; later ones are "<base>-p<n>"
	hist    []llm.Message
	turns   int
	corrs   int
	ev      []event.Event
	snap    [][]llm.Message
	durable []llm.Message
	clock   time.Time
	parent  *fakeAgent // events go to the parent's stream (sub-agent)
}

// call is one scripted model call.
type call struct {
	resp    llm.Message
	stop    llm.StopReason
	usage   llm.Usage
	results []llm.Block // one per tool_use, for executed tools
	err     string      // the provider fails instead
}

func newFake(loopID string) *fakeAgent {
	return &fakeAgent{loopID: loopID, base: loopID, clock: time.Now().UTC().Add(time.Hour).Truncate(time.Second)}
}

func (a *fakeAgent) root() *fakeAgent {
	if a.parent != nil {
		return a.parent.root()
	}
	return a
}

func (a *fakeAgent) emit(e event.Event) {
	r := a.root()
	r.clock = r.clock.Add(time.Second)
	e.Seq, e.Time = int64(len(r.ev)+1), r.clock
	r.ev = append(r.ev, e)
	r.snap = append(r.snap, cloneMsgs(r.durable))
}

func (a *fakeAgent) setDurable(h []llm.Message) {
	if a.parent == nil {
		a.durable = cloneMsgs(h)
	}
}

func cloneMsgs(h []llm.Message) []llm.Message {
	out := make([]llm.Message, len(h))
	for i, m := range h {
		out[i] = llm.Message{Role: m.Role, Content: slices.Clone(m.Content)}
	}
	return out
}

func (a *fakeAgent) appendUser(blocks ...llm.Block) llm.Message {
	if n := len(a.hist); n > 0 && a.hist[n-1].Role == llm.RoleUser {
		a.hist[n-1].Content = append(a.hist[n-1].Content, blocks...)
		return llm.Message{Role: llm.RoleUser, Content: slices.Clone(a.hist[n-1].Content)}
	}
	a.hist = append(a.hist, llm.Message{Role: llm.RoleUser, Content: blocks})
	return llm.Message{Role: llm.RoleUser, Content: slices.Clone(blocks)}
}

// prompt plays one user turn through calls, as agent.Prompt does: in a new
// loop (turns from 0) continuing the previous one, unless the current loop
// has not run a turn yet.
func (a *fakeAgent) prompt(text string, trigger event.Trigger, calls ...call) {
	if a.turns > 0 {
		a.prev, a.loopID, a.turns = a.loopID, fmt.Sprintf("%s-p%d", a.base, len(a.loops)+1), 0
	}
	if len(calls) > 0 {
		a.loops = append(a.loops, a.loopID)
	}
	a.corrs++
	corr := fmt.Sprintf("%s-corr-%d", a.loopID, a.corrs)
	a.emit(event.Event{Kind: event.SessionTurnStart, CorrelationID: corr, Text: text})
	input := []llm.Message{a.appendUser(llm.TextBlock(text))}
	for _, c := range calls {
		id := &event.TurnID{LoopID: a.loopID, Index: a.turns}
		a.turns++
		ts := event.Event{Kind: event.TurnStart, CorrelationID: corr, Turn: id, Trigger: trigger}
		if id.Index == 0 {
			ts.PreviousLoopID = a.prev
		}
		a.emit(ts)
		for i := range input {
			a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: id, Message: &llm.Message{Role: input[i].Role}})
			a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: id, Message: &input[i]})
		}
		a.emit(event.Event{Kind: event.ProviderRequest, CorrelationID: corr, Turn: id, Provider: "fake"})
		a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: id, Message: &llm.Message{Role: llm.RoleAssistant}})
		a.emit(event.Event{Kind: event.MessageUpdate, CorrelationID: corr, Turn: id, Delta: &llm.Delta{Type: llm.DeltaText, Text: "…"}})
		if c.err != "" {
			a.emit(event.Event{Kind: event.ProviderError, CorrelationID: corr, Turn: id, Error: c.err})
			a.setDurable(a.hist)
			a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: id, Error: c.err})
			a.emit(event.Event{Kind: event.SessionTurnEnd, CorrelationID: corr, Error: c.err})
			return
		}
		resp := c.resp
		a.hist = append(a.hist, resp)
		a.setDurable(a.hist)
		a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: id, Message: &resp, StopReason: c.stop})
		u := c.usage
		a.emit(event.Event{Kind: event.ProviderResponse, CorrelationID: corr, Turn: id, Usage: &u, StopReason: c.stop})
		if uses := resp.ToolUses(); len(uses) > 0 {
			var out []llm.Block
			for i := range uses {
				call := uses[i]
				if c.stop == llm.StopMaxTokens {
					out = append(out, llm.ToolResultBlock(call.ID, notRunMaxTokens, true))
					continue
				}
				a.emit(event.Event{Kind: event.ToolExecutionStart, CorrelationID: corr, Turn: id, ToolCall: &call})
				res := c.results[i]
				out = append(out, res)
				a.setDurable(append(cloneMsgs(a.hist), llm.Message{Role: llm.RoleUser, Content: slices.Clone(out)}))
				a.emit(event.Event{Kind: event.ToolExecutionEnd, CorrelationID: corr, Turn: id, ToolCall: &call, ToolResult: &res})
			}
			a.appendUser(out...)
		}
		a.setDurable(a.hist)
		a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: id, Usage: &u, StopReason: c.stop})
		input, trigger = nil, event.TriggerContinuation
	}
	a.emit(event.Event{Kind: event.SessionTurnEnd, CorrelationID: corr})
}

// toolCall returns an assistant message asking for the named tools (ids
// "<prefix>-<i>") and their results.
func toolCall(prefix string, names ...string) (llm.Message, []llm.Block) {
	m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("let me look <&>")}}
	var res []llm.Block
	for i, n := range names {
		id := fmt.Sprintf("%s-%d", prefix, i)
		m.Content = append(m.Content, llm.ToolUseBlock(id, n, json.RawMessage(fmt.Sprintf(`{"arg":%d}`, i))))
		res = append(res, llm.ToolResultBlock(id, fmt.Sprintf("result of %s #%d", n, i), i == 2))
	}
	return m, res
}

func usage(in, out, cr, cw int64) llm.Usage {
	return llm.Usage{Input: in, Output: out, CacheRead: cr, CacheWrite: cw}.WithTotal()
}

// mainScript is a two-prompt session: tool round trips (3 tools, then 1), a
// final answer; then a prompt whose model call fails; then a prompt (merged
// into the failed turn's user message) cut at max_tokens with a tool call;
// then a prompt merged into those synthesized results that ends normally.
func mainScript(loopID string) *fakeAgent {
	a := newFake(loopID)
	m1, r1 := toolCall("t0", "glob", "fs_read", "grep")
	m2, r2 := toolCall("t1", "fs_read")
	a.prompt("what is here?\nsecond line", event.TriggerUser,
		call{resp: m1, stop: llm.StopToolUse, usage: usage(100, 20, 0, 50), results: r1},
		call{resp: m2, stop: llm.StopToolUse, usage: usage(10, 30, 150, 5), results: r2},
		call{resp: llm.AssistantText("done"), stop: llm.StopEndTurn, usage: usage(7, 3, 180, 0)},
	)
	a.prompt("and now?", event.TriggerUser, call{err: "fake: HTTP 529 overloaded_error"})
	m3, _ := toolCall("t4", "glob", "grep")
	a.prompt("try again", event.TriggerUser, call{resp: m3, stop: llm.StopMaxTokens, usage: usage(1, 4096, 200, 0)})
	a.prompt("finish", event.TriggerUser, call{resp: llm.AssistantText("ok"), stop: llm.StopEndTurn, usage: usage(2, 2, 210, 0)})
	return a
}

// impl is one Store implementation under the shared behavioural tests.
type impl struct {
	name string
	open func(t *testing.T) Store // an empty store, closed when the test ends
	// crash stands for the process dying after its last write (no Close of
	// anything, nothing flushed by hand) and a new one starting: it returns
	// a store holding what survived.
	crash func(t *testing.T, s Store) Store
	// second returns another handle on s's data, as another process would
	// open it (SQLite) or the same store (Memory).
	second func(t *testing.T, s Store) Store
}

var impls = []impl{
	{
		name: "sqlite",
		open: func(t *testing.T) Store { s, _ := openTemp(t); return s },
		crash: func(t *testing.T, s Store) Store {
			t.Helper()
			s.Close()
			return openPath(t, s.(*SQLite).Path())
		},
		second: func(t *testing.T, s Store) Store { t.Helper(); return openPath(t, s.(*SQLite).Path()) },
	},
	{
		name: "memory",
		open: func(t *testing.T) Store {
			s := NewMemory()
			t.Cleanup(func() { s.Close() })
			return s
		},
		crash:  func(_ *testing.T, s Store) Store { return s },
		second: func(_ *testing.T, s Store) Store { return s },
	},
}

// eachStore runs f as a subtest per implementation, on a new empty store.
func eachStore(t *testing.T, f func(t *testing.T, im impl, s Store)) {
	t.Helper()
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) { f(t, im, im.open(t)) })
	}
}

func openTemp(t *testing.T) (*SQLite, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "strata.db")
	return openPath(t, path), path
}

// openPath opens the database at path, closed when the test ends.
func openPath(t *testing.T, path string) *SQLite {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// feed passes events to a new recorder for session sid and fails on error.
func feed(t *testing.T, s Store, sid string, evs []event.Event) *Recorder {
	t.Helper()
	r := NewRecorder(s, sid)
	for _, e := range evs {
		if err := r.Observe(t.Context(), e); err != nil {
			t.Fatalf("observe %s seq %d: %v", e.Kind, e.Seq, err)
		}
	}
	return r
}

// jsonEq compares values by their JSON encoding, failing with both.
func jsonEq(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got  %s\n want %s", what, g, w)
	}
}
