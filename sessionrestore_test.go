package strata_test

import (
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// A stored session whose first prompt stopped before its first turn has no
// loop: resuming it (`strata sessions resume`, ACP session/load) opens it
// with an empty conversation, and its next prompt is its first stored loop;
// `strata render --session` renders it as a new conversation.
// It used to fail with "session … has no loop to continue". Branching it
// fails with a *ConfigError that says why (there is no turn to branch
// from) and wraps session.ErrNotFound.
func TestResumeSessionWhoseFirstPromptStoppedBeforeItsFirstTurn(t *testing.T) {
	m := newScriptedModel(t, func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}} })
	var abort atomic.Bool
	abort.Store(true)
	ws, s := openSwappable(t, m, &abort)
	ctx := t.Context()
	if _, err := s.Prompt(ctx, "stopped one"); !errors.Is(err, agent.ErrAborted) {
		t.Fatalf("prompt under an aborting before_turn: %v; want ErrAborted", err)
	}
	id := s.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	abort.Store(false)

	_, err := ws.BranchSession(ctx, id, 0, strata.SessionOptions{})
	var cerr *strata.ConfigError
	if !errors.As(err, &cerr) || !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "no stored turn") {
		t.Errorf("branch of a session without a turn: %v; want a ConfigError saying it has no stored turn", err)
	}
	if _, err := ws.Render(ctx, strata.RenderOptions{Session: id, Prompt: "again"}); err != nil {
		t.Errorf("render --session of a session without a loop: %v", err)
	}
	r, err := ws.ResumeSession(ctx, id, strata.SessionOptions{})
	if err != nil {
		t.Fatalf("resume a session whose first prompt stopped before its first turn: %v", err)
	}
	defer r.Close()
	if h, p := r.History(), r.Pending(); len(h) != 0 || p != nil || r.ID() != id {
		t.Fatalf("resumed session %s: history %v, pending %v; want session %s, empty", r.ID(), h, p, id)
	}
	if _, err := r.Prompt(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	latest, err := ws.Store().LatestLoop(ctx, id)
	if err != nil || latest != r.LoopID() {
		t.Fatalf("latest loop of the session %q, %v; want the resumed prompt's %s", latest, err, r.LoopID())
	}
	stored, err := ws.Store().History(ctx, latest)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(stored), mustJSON([]llm.Message{llm.UserText("again"), llm.AssistantText("ok")}); g != w {
		t.Errorf("stored history %s; want %s", g, w)
	}
}

// A prompt stores its loop's checkpoint (session.Checkpoints), and a
// resumed session restored from it sends the request an uninterrupted
// session sends (tiered: its stability tracker comes from the checkpoint,
// not from replaying the layout over every stored request).
func TestResumeRestoresFromTheCheckpoint(t *testing.T) {
	answer := func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("noted")}} }
	open := func(m *scriptedModel) (*strata.Workspace, *strata.Session) {
		st, err := session.Open(filepath.Join(t.TempDir(), "strata.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return openScripted(t, strata.Options{Dir: t.TempDir(), Layout: "tiered", Store: st}, m)
	}
	ctx := t.Context()
	prompts := []string{"first", "second", "third"}
	um := newScriptedModel(t, answer)
	_, u := open(um)
	for _, p := range prompts {
		if _, err := u.Prompt(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	m := newScriptedModel(t, answer)
	ws, s := open(m)
	for _, p := range prompts[:2] {
		if _, err := s.Prompt(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	loop, id := s.LoopID(), s.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := ws.Store().(session.Checkpoints).Checkpoint(ctx, loop)
	if err != nil || !strings.Contains(string(data), `"layout_name":"tiered"`) {
		t.Fatalf("checkpoint of loop %s: %.200s, %v; want the tiered layout's state", loop, data, err)
	}
	r, err := ws.ResumeSession(ctx, id, strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Prompt(ctx, prompts[2]); err != nil {
		t.Fatal(err)
	}
	want, got := um.bodies()[2], m.bodies()[2]
	if got != want {
		t.Fatalf("resumed request differs from the uninterrupted one:\n%.600s\nwant\n%.600s", got, want)
	}
}
