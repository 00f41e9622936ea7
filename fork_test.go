package strata_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
)

// A fork (a workflow stage's pass of the loop) runs with its own system
// prompt, narrowed tools and a completion tool that ends its loop; the
// session's store, history and observers never see it, and the session's
// next prompt continues from where the fork began.
func TestForkIsNotRecordedInTheSession(t *testing.T) {
	m := newScriptedModel(t, func(body string) replay.Reply {
		switch {
		case strings.Contains(body, "STAGE BODY") && !strings.Contains(body, "tool_result"):
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("c1", "complete", json.RawMessage(`{"summary":"planned"}`))}}
		default:
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("session answer")}}
		}
	})
	var seen []event.Kind
	ws, s := openScripted(t, strata.Options{Dir: t.TempDir(), Mode: agent.ModeAllowlist}, m)
	s.Subscribe(func(e event.Event) { seen = append(seen, e.Kind) })
	ctx := t.Context()
	if _, err := s.Prompt(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	before, history := len(seen), len(s.History())
	type summary struct {
		Summary string `json:"summary"`
	}
	complete := tool.Typed("complete", "Hand the stage's result back.", tool.Traits{EndsTurn: true, PreApproved: true},
		func(_ context.Context, _ tool.Call, in summary) (summary, error) { return in, nil })
	body := "STAGE BODY: plan the change."
	var forkEvents int
	f, err := s.Fork(ctx, strata.ForkOptions{OnEvent: func(event.Event) { forkEvents++ },
		Overrides: agent.Overrides{System: &body, Extra: []tool.Tool{complete},
			Tools: func(name string) bool { return name == "complete" || name == "fs_read" }}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Prompt(ctx, "plan")
	f.Close()
	if err != nil || res.EndedBy != "complete" || res.ToolResult.Content[0].Text != `{"summary":"planned"}` {
		t.Fatalf("fork: %+v, %v; want it ended by the completion tool", res, err)
	}
	if len(seen) != before || len(s.History()) != history || forkEvents == 0 {
		t.Errorf("the fork reached the session: %d→%d session events, %d→%d messages (%d fork events)", before, len(seen), history, len(s.History()), forkEvents)
	}
	last := m.bodies()[len(m.bodies())-1]
	if !strings.Contains(last, body) || strings.Contains(last, `"name":"execute_bash"`) {
		t.Errorf("the fork's request lacks its system prompt or offers tools it narrowed away:\n%.400s", last)
	}
	d, err := ws.Store().LoadSession(ctx, s.ID())
	if err != nil || len(d.Turns) != 1 {
		t.Fatalf("stored turns %d (%v); want only the session's own prompt", len(d.Turns), err)
	}
	if _, err := s.Prompt(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	if after := m.bodies()[len(m.bodies())-1]; strings.Contains(after, "STAGE BODY") || strings.Contains(after, `"name":"complete"`) {
		t.Errorf("the session's next prompt carries the fork's system prompt or tool:\n%s", after)
	}
}

// A program's own tools (Options.Tools, SessionOptions.Overrides.Extra)
// pass the same approval as built-ins: in allowlist mode with no approver a
// call is denied unless the tool's Traits say PreApproved. Before, every
// Options tool ran unasked.
func TestAttackProgramToolsAreApprovedLikeBuiltins(t *testing.T) {
	ran := 0
	mk := func(tr tool.Traits) tool.Tool {
		return tool.WithTraits(tool.Func("deploy", "Deploy.", func(context.Context, struct{}) (string, error) { ran++; return "deployed", nil }), tr)
	}
	for _, c := range []struct {
		traits tool.Traits
		runs   int
	}{{tool.Traits{}, 0}, {tool.Traits{PreApproved: true}, 1}} {
		ran = 0
		m := newScriptedModel(t, func(body string) replay.Reply {
			if strings.Contains(body, "tool_result") {
				return replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}}
			}
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("d1", "deploy", json.RawMessage(`{}`))}}
		})
		_, s := openScripted(t, strata.Options{Dir: t.TempDir(), Mode: agent.ModeAllowlist, Tools: []tool.Tool{mk(c.traits)}}, m)
		if _, err := s.Prompt(t.Context(), "deploy it"); err != nil {
			t.Fatal(err)
		}
		if ran != c.runs {
			t.Errorf("traits %+v: the tool ran %d times; want %d", c.traits, ran, c.runs)
		}
	}
}

// Session.Emit publishes a front end's own event to the session's
// observers, refuses the loop's own kinds, and stores nothing.
func TestSessionEmit(t *testing.T) {
	m := newScriptedModel(t, func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}} })
	ws, s := openScripted(t, strata.Options{Dir: t.TempDir()}, m)
	var got []event.Event
	s.Subscribe(func(e event.Event) { got = append(got, e) })
	if err := s.Emit(event.Event{Kind: event.TurnEnd}); err == nil {
		t.Error("a front end emitted the loop's turn_end")
	}
	if err := s.Emit(event.Event{Kind: "acme.note", Text: "user pinned a file"}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != "acme.note" || got[0].Text != "user pinned a file" {
		t.Fatalf("observers saw %+v; want the acme.note event", got)
	}
	if _, err := ws.Store().LoadSession(t.Context(), s.ID()); err != nil {
		t.Fatal(err)
	}
	if list, _ := ws.Store().ListSessions(t.Context(), session.ListOptions{}); len(list) != 1 || list[0].Turns != 0 {
		t.Errorf("the event was stored as a turn: %+v", list)
	}
}

// Clear (the chat's /clear) starts a new conversation in the same session:
// the next request carries none of the earlier messages, its loop
// continues no earlier loop, and the session's usage keeps counting.
func TestSessionClearStartsANewConversation(t *testing.T) {
	m := newScriptedModel(t, func(string) replay.Reply {
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}, Usage: llm.Usage{Input: 10, Output: 2}}
	})
	ws, s := openScripted(t, strata.Options{Dir: t.TempDir()}, m)
	ctx := t.Context()
	if _, err := s.Prompt(ctx, "remember the word BANANA"); err != nil {
		t.Fatal(err)
	}
	before, used := s.LoopID(), s.Usage()
	if err := s.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, "what was the word?"); err != nil {
		t.Fatal(err)
	}
	last := m.bodies()[len(m.bodies())-1]
	if strings.Contains(last, "BANANA") || len(s.History()) != 2 {
		t.Fatalf("the request after /clear still carries the earlier conversation (%d messages):\n%.300s", len(s.History()), last)
	}
	if s.LoopID() == before || s.Usage().Total <= used.Total {
		t.Errorf("loop %s (was %s), usage %+v (was %+v); want a new loop and usage that keeps counting", s.LoopID(), before, s.Usage(), used)
	}
	h, err := ws.Store().History(ctx, s.LoopID())
	if err != nil || len(h) != 2 {
		t.Errorf("stored history of the new loop: %d messages, %v; want only its own 2", len(h), err)
	}
}

// Compact (the chat's /compact) freezes every prompt but the last into
// history chunks: the next request carries them as chunk text, not as
// messages, and a resumed session keeps them (the checkpoint).
func TestSessionCompactFreezesEarlierPrompts(t *testing.T) {
	m := newScriptedModel(t, func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("noted")}} })
	ws, s := openScripted(t, strata.Options{Dir: t.TempDir(), Layout: "panels"}, m)
	ctx := t.Context()
	for _, p := range []string{"first MARKER-ONE", "second MARKER-TWO"} {
		if _, err := s.Prompt(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Compact(ctx)
	if err != nil || n != 2 {
		t.Fatalf("compact: %d messages, %v; want the first prompt and its answer", n, err)
	}
	if n, err := s.Compact(ctx); err != nil || n != 0 {
		t.Errorf("second compact: %d, %v; want nothing left to compact", n, err)
	}
	if _, err := s.Prompt(ctx, "third"); err != nil {
		t.Fatal(err)
	}
	var req struct {
		Messages []struct{ Role string } `json:"messages"`
	}
	last := m.bodies()[len(m.bodies())-1]
	if err := json.Unmarshal([]byte(last), &req); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(last, "MARKER-ONE") || !strings.Contains(last, "Conversation history") {
		t.Errorf("the compacted prompt is not in the request as a history chunk:\n%.500s", last)
	}
	id := s.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := ws.ResumeSession(ctx, id, strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, err := r.Compact(ctx); err != nil || n != 2 {
		t.Errorf("after resume, compact detached %d (%v); want only the last prompt's two messages left to freeze (the chunk kept)", n, err)
	}
}

// Two forks of one session keep their own approvals: a person's yes to a
// call in fork A reaches A's tool even when fork B was made after A (every
// loop used to bind tool.Env.PersonApproved on the session's one shared
// Env, so A's tool read B's approvals and refused the approved write; two
// forks running at once raced on it). The same holds for every loop built
// on the session's Env: an agent swap's, /clear's.
func TestForksKeepTheirOwnPersonApprovals(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".kiro/agents/k.json": `{"name":"k","prompt":"p","tools":["fs_read","fs_write"],"allowedTools":["fs_read","fs_write"]}`})
	m := newScriptedModel(t, func(body string) replay.Reply {
		if strings.Contains(body, "tool_result") {
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("written")}}
		}
		return replay.Reply{Blocks: []llm.Block{toolUse("w", "fs_write", map[string]any{"command": "create", "path": ".kiro/agents/new.json", "file_text": "{}"})}}
	})
	ap := &askLog{answer: agent.AllowOnce}
	_, s := openScripted(t, strata.Options{Dir: dir, Agent: "k", Mode: agent.ModeAllowlist, Approver: ap}, m)
	a, err := s.Fork(t.Context(), strata.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := s.Fork(t.Context(), strata.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.Prompt(t.Context(), "write the agent file"); err != nil {
		t.Fatal(err)
	}
	if len(ap.asked) != 1 {
		t.Fatalf("asked %q; want the write asked about once", ap.asked)
	}
	for _, msg := range a.History() {
		for _, blk := range msg.Content {
			if blk.Type == llm.BlockToolResult && blk.IsError {
				t.Errorf("the approved write was refused in fork A: %s", resultText(blk))
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".kiro/agents/new.json")); err != nil {
		t.Errorf("the approved file was not written: %v", err)
	}
}

// ForkLoop returns what Fork would run without running it: the session's
// Config with the overrides, and a new loop continuing the session's
// conversation (its history, usage and layout state, the session's loop as
// the previous one, a branch as the first trigger).
func TestForkLoopIsTheForksConfigAndState(t *testing.T) {
	m := newScriptedModel(t, func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("session answer")}} })
	_, s := openScripted(t, strata.Options{Dir: t.TempDir(), Mode: agent.ModeAllowlist}, m)
	if _, err := s.Prompt(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	body := "STAGE BODY"
	done := tool.Typed("complete", "Hand the result back.", tool.Traits{EndsTurn: true}, func(context.Context, tool.Call, struct{}) (string, error) { return "", nil })
	cfg, st, err := s.ForkLoop(strata.ForkOptions{Overrides: agent.Overrides{System: &body, Extra: []tool.Tool{done}, MaxTurns: 3}})
	if err != nil {
		t.Fatal(err)
	}
	own := s.LoopState()
	if cfg.Context.System != body || cfg.MaxTurns != 3 || !cfg.Tools.Traits("complete").EndsTurn {
		t.Errorf("the fork's Config lacks the overrides: system %q, max turns %d", cfg.Context.System, cfg.MaxTurns)
	}
	if len(st.History) != len(s.History()) || st.PreviousLoopID != own.LoopID || st.LoopID == own.LoopID ||
		st.FirstTrigger != event.TriggerBranch || st.Usage != own.Usage || st.ConversationID != own.ConversationID {
		t.Errorf("fork state %+v; want a new loop continuing %+v", st, own)
	}
}
