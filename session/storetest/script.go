package storetest

import (
	"encoding/json"
	"fmt"
	"github.com/strata-agent/strata/session"
	"slices"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// Script emits, without a provider or tools, exactly the events agent.Agent
// emits, in its order (docs/turn.md), and keeps the history agent.Agent would
// hold. It also records, after each event, the history a crash-safe recorder
// must have in the store once it has seen that event (Snap). Build one with
// NewScript and Prompt, or take MainScript.
type Script struct {
	LoopID  string          // the current loop: a new one per prompt after one that ran a turn
	Loops   []string        // every loop the agent ran, in order
	Hist    []llm.Message   // the history agent.Agent holds after the last event
	Turns   int             // turns run in the current loop
	Events  []event.Event   // every event emitted, Seq from 1, Time one second apart
	Snap    [][]llm.Message // Snap[i]: the history a recorder must have stored after Events[i]
	Clock   time.Time       // the last event's time
	Prev    string          // the loop LoopID continues ("" for none)
	base    string          // the first loop's id; later ones are "<base>-p<n>"
	corrs   int
	durable []llm.Message
	parent  *Script // events go to the parent's stream (sub-agent)
}

// Call is one scripted model call of Script.Prompt.
type Call struct {
	Resp    llm.Message    // the assistant message the model returns
	Stop    llm.StopReason // its stop reason
	Usage   llm.Usage      // its usage, tokens
	Results []llm.Block    // one tool_result per tool_use, for executed tools
	Err     string         // when set, the provider fails with this error instead
}

// NewScript returns an empty script whose first loop is loopID; its clock
// starts an hour from now, on a whole second.
func NewScript(loopID string) *Script {
	return &Script{LoopID: loopID, base: loopID, Clock: time.Now().UTC().Add(time.Hour).Truncate(time.Second)}
}

func (a *Script) root() *Script {
	if a.parent != nil {
		return a.parent.root()
	}
	return a
}

func (a *Script) emit(e event.Event) {
	r := a.root()
	r.Clock = r.Clock.Add(time.Second)
	e.Seq, e.Time = int64(len(r.Events)+1), r.Clock
	r.Events = append(r.Events, e)
	r.Snap = append(r.Snap, CloneMessages(r.durable))
}

func (a *Script) setDurable(h []llm.Message) {
	if a.parent == nil {
		a.durable = CloneMessages(h)
	}
}

// CloneMessages returns a copy of h whose messages have their own content
// slices.
func CloneMessages(h []llm.Message) []llm.Message {
	out := make([]llm.Message, len(h))
	for i, m := range h {
		out[i] = llm.Message{Role: m.Role, Content: slices.Clone(m.Content)}
	}
	return out
}

func (a *Script) appendUser(blocks ...llm.Block) llm.Message {
	if n := len(a.Hist); n > 0 && a.Hist[n-1].Role == llm.RoleUser {
		a.Hist[n-1].Content = append(a.Hist[n-1].Content, blocks...)
		return llm.Message{Role: llm.RoleUser, Content: slices.Clone(a.Hist[n-1].Content)}
	}
	a.Hist = append(a.Hist, llm.Message{Role: llm.RoleUser, Content: blocks})
	return llm.Message{Role: llm.RoleUser, Content: slices.Clone(blocks)}
}

// Prompt plays one user turn through calls, as agent.Prompt does: in a new
// loop (turns from 0) continuing the previous one, unless the current loop
// has not run a turn yet.
func (a *Script) Prompt(text string, trigger event.Trigger, calls ...Call) {
	if a.Turns > 0 {
		a.Prev, a.LoopID, a.Turns = a.LoopID, fmt.Sprintf("%s-p%d", a.base, len(a.Loops)+1), 0
	}
	if len(calls) > 0 {
		a.Loops = append(a.Loops, a.LoopID)
	}
	a.corrs++
	corr := fmt.Sprintf("%s-corr-%d", a.LoopID, a.corrs)
	a.emit(event.Event{Kind: event.SessionTurnStart, CorrelationID: corr, Text: text})
	input := []llm.Message{a.appendUser(llm.TextBlock(text))}
	for _, c := range calls {
		id := &event.TurnID{LoopID: a.LoopID, Index: a.Turns}
		a.Turns++
		ts := event.Event{Kind: event.TurnStart, CorrelationID: corr, Turn: id, Trigger: trigger}
		if id.Index == 0 {
			ts.PreviousLoopID = a.Prev
		}
		a.emit(ts)
		for i := range input {
			a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: id, Message: &llm.Message{Role: input[i].Role}})
			a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: id, Message: &input[i]})
		}
		a.emit(event.Event{Kind: event.ProviderRequest, CorrelationID: corr, Turn: id, Provider: "fake"})
		a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: id, Message: &llm.Message{Role: llm.RoleAssistant}})
		a.emit(event.Event{Kind: event.MessageUpdate, CorrelationID: corr, Turn: id, Delta: &llm.Delta{Type: llm.DeltaText, Text: "…"}})
		if c.Err != "" {
			a.emit(event.Event{Kind: event.ProviderError, CorrelationID: corr, Turn: id, Error: c.Err})
			a.setDurable(a.Hist)
			a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: id, Error: c.Err})
			a.emit(event.Event{Kind: event.SessionTurnEnd, CorrelationID: corr, Error: c.Err})
			return
		}
		resp := c.Resp
		a.Hist = append(a.Hist, resp)
		a.setDurable(a.Hist)
		a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: id, Message: &resp, StopReason: c.Stop})
		u := c.Usage
		a.emit(event.Event{Kind: event.ProviderResponse, CorrelationID: corr, Turn: id, Usage: &u, StopReason: c.Stop})
		if uses := resp.ToolUses(); len(uses) > 0 {
			var out []llm.Block
			for i := range uses {
				call := uses[i]
				if c.Stop == llm.StopMaxTokens {
					out = append(out, llm.ToolResultBlock(call.ID, session.NotRunMaxTokens, true))
					continue
				}
				a.emit(event.Event{Kind: event.ToolExecutionStart, CorrelationID: corr, Turn: id, ToolCall: &call})
				res := c.Results[i]
				out = append(out, res)
				a.setDurable(append(CloneMessages(a.Hist), llm.Message{Role: llm.RoleUser, Content: slices.Clone(out)}))
				a.emit(event.Event{Kind: event.ToolExecutionEnd, CorrelationID: corr, Turn: id, ToolCall: &call, ToolResult: &res})
			}
			a.appendUser(out...)
		}
		a.setDurable(a.Hist)
		a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: id, Usage: &u, StopReason: c.Stop})
		input, trigger = nil, event.TriggerContinuation
	}
	a.emit(event.Event{Kind: event.SessionTurnEnd, CorrelationID: corr})
}

// ToolCall returns an assistant message asking for the named tools (ids
// "<prefix>-<i>") and their results.
func ToolCall(prefix string, names ...string) (llm.Message, []llm.Block) {
	m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("let me look <&>")}}
	var res []llm.Block
	for i, n := range names {
		id := fmt.Sprintf("%s-%d", prefix, i)
		m.Content = append(m.Content, llm.ToolUseBlock(id, n, json.RawMessage(fmt.Sprintf(`{"arg":%d}`, i))))
		res = append(res, llm.ToolResultBlock(id, fmt.Sprintf("result of %s #%d", n, i), i == 2))
	}
	return m, res
}

// Usage returns a usage of in input, out output, cr cache-read and cw
// cache-write tokens, with its total.
func Usage(in, out, cr, cw int64) llm.Usage {
	return llm.Usage{Input: in, Output: out, CacheRead: cr, CacheWrite: cw}.WithTotal()
}

// MainScript is a two-prompt session: tool round trips (3 tools, then 1), a
// final answer; then a prompt whose model call fails; then a prompt (merged
// into the failed turn's user message) cut at max_tokens with a tool call;
// then a prompt merged into those synthesized results that ends normally.
func MainScript(loopID string) *Script {
	a := NewScript(loopID)
	m1, r1 := ToolCall("t0", "glob", "fs_read", "grep")
	m2, r2 := ToolCall("t1", "fs_read")
	a.Prompt("what is here?\nsecond line", event.TriggerUser,
		Call{Resp: m1, Stop: llm.StopToolUse, Usage: Usage(100, 20, 0, 50), Results: r1},
		Call{Resp: m2, Stop: llm.StopToolUse, Usage: Usage(10, 30, 150, 5), Results: r2},
		Call{Resp: llm.AssistantText("done"), Stop: llm.StopEndTurn, Usage: Usage(7, 3, 180, 0)},
	)
	a.Prompt("and now?", event.TriggerUser, Call{Err: "fake: HTTP 529 overloaded_error"})
	m3, _ := ToolCall("t4", "glob", "grep")
	a.Prompt("try again", event.TriggerUser, Call{Resp: m3, Stop: llm.StopMaxTokens, Usage: Usage(1, 4096, 200, 0)})
	a.Prompt("finish", event.TriggerUser, Call{Resp: llm.AssistantText("ok"), Stop: llm.StopEndTurn, Usage: Usage(2, 2, 210, 0)})
	return a
}

// Feed passes evs to a new Recorder for session sid of s and fails the test
// on the first error.
func Feed(t *testing.T, s session.Store, sid string, evs []event.Event) *session.Recorder {
	t.Helper()
	r := session.NewRecorder(s, sid)
	for _, e := range evs {
		if err := r.Observe(t.Context(), e); err != nil {
			t.Fatalf("observe %s seq %d: %v", e.Kind, e.Seq, err)
		}
	}
	return r
}

// JSONEq compares got and want by their JSON encoding, failing the test with
// both.
func JSONEq(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got  %s\n want %s", what, g, w)
	}
}
