package strata_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
)

// errDiskFull is the failure failingStore injects.
var errDiskFull = errors.New("disk full")

// failingStore is a Memory whose WriteStep fails from the failAt-th call on
// (1-based; 0 = never).
type failingStore struct {
	*session.Memory
	writes, failAt int
}

func (f *failingStore) WriteStep(ctx context.Context, s session.Step) error {
	f.writes++
	if f.failAt > 0 && f.writes >= f.failAt {
		return errDiskFull
	}
	return f.Memory.WriteStep(ctx, s)
}

// openReplay opens a workspace on o in a temporary directory, its model
// scripted by o.Replay (Anthropic), and a new session in it; both are
// closed when the test ends.
func openReplay(t *testing.T, o strata.Options) (*strata.Workspace, *strata.Session) {
	t.Helper()
	o.Dir, o.ProviderName = t.TempDir(), "anthropic"
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

// A step the store cannot write stops the loop before its next step and
// fails the prompt with an error naming the session and wrapping the
// store's: the assistant message asking for a tool is not stored, so the
// tool does not run and the second model call is not made. Later prompts
// fail the same way; Close reports it too.
func TestPromptFailsWhenAStepIsNotRecorded(t *testing.T) {
	var ran atomic.Int32
	count := tool.Func("count", "Counts calls.", func(context.Context, struct{}) (string, error) {
		ran.Add(1)
		return "ok", nil
	})
	call, err := replay.ToolCall(llm.APIAnthropic, "call_1", "count", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	text, err := replay.Text(llm.APIAnthropic, "done")
	if err != nil {
		t.Fatal(err)
	}
	store := &failingStore{Memory: session.NewMemory(), failAt: 1}
	ctx := t.Context()
	_, s := openReplay(t, strata.Options{Store: store, Replay: []replay.Response{call, text}, Tools: []tool.Tool{count}})
	_, err = s.Prompt(ctx, "count once")
	if !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "session "+s.ID()) {
		t.Fatalf("Prompt: %v; want an error naming session %s wrapping %v", err, s.ID(), errDiskFull)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the tool ran %d time(s) after its call could not be stored", n)
	}
	if _, err := s.Prompt(ctx, "again"); !errors.Is(err, errDiskFull) {
		t.Errorf("second Prompt: %v; want the recording error again", err)
	}
	if err := s.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("Close: %v; want the recording error", err)
	}
}

// A stored session has one open Session at a time: resuming it while it is
// open fails with session.ErrBusy naming it; after Close it resumes.
func TestSessionHoldsItsWriterLease(t *testing.T) {
	text, err := replay.Text(llm.APIAnthropic, "done")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ws, a := openReplay(t, strata.Options{Store: session.NewMemory(), Replay: []replay.Response{text, text}})
	if _, err := a.Prompt(ctx, "hi"); err != nil {
		t.Fatal(err)
	}
	for _, open := range []func() (*strata.Session, error){
		func() (*strata.Session, error) { return ws.ResumeSession(ctx, a.ID(), strata.SessionOptions{}) },
		func() (*strata.Session, error) { return ws.BranchSession(ctx, a.ID(), 0, strata.SessionOptions{}) },
	} {
		if _, err := open(); !errors.Is(err, session.ErrBusy) || !strings.Contains(err.Error(), a.ID()) {
			t.Fatalf("second open while the first is open: %v; want ErrBusy naming %s", err, a.ID())
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := ws.ResumeSession(ctx, a.ID(), strata.SessionOptions{})
	if err != nil {
		t.Fatalf("resume after Close: %v", err)
	}
	if _, err := b.Prompt(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}
