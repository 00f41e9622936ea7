package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// statusModel answers each request with the next scripted HTTP error (an
// Anthropic error body, a retry-after header when given) and then a text
// reply; it notes the workflow clock at each request.
type statusModel struct {
	t      *testing.T
	h      *harness
	errs   []statusReply
	mu     sync.Mutex
	at     []time.Time
	served int
}

type statusReply struct {
	status     int
	kind       string
	retryAfter string
}

func (m *statusModel) respond(r replay.Request) replay.Response {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at = append(m.at, m.h.env.Now())
	i := m.served
	m.served++
	if i >= len(m.errs) {
		return turn(m.t, llm.TextBlock("Through."))
	}
	e := m.errs[i]
	hdr := http.Header{"Content-Type": {"application/json"}}
	if e.retryAfter != "" {
		hdr.Set("Retry-After", e.retryAfter)
	}
	return replay.Response{Status: e.status, Header: hdr,
		Body: []byte(`{"type":"error","error":{"type":"` + e.kind + `","message":"scripted ` + e.kind + `"}}`)}
}

// runStatus runs one prompt against a model answering errs first.
func runStatus(t *testing.T, errs ...statusReply) (*statusModel, PromptResult) {
	m := &statusModel{t: t, errs: errs}
	o := options(t.TempDir(), nil, session.NewMemory())
	o.Respond = m.respond
	h := newHarness(t, WorkerOptions{Options: o})
	m.h = h
	h.prompt("Hello?")
	h.run(Spec{SessionID: "s-status"})
	if len(h.results) != 1 {
		t.Fatalf("got %d results", len(h.results))
	}
	return m, h.results[0]
}

// TestModelCallRetriesRateLimitsAfterRetryAfter: a 429 asking for 30 s and
// a 529 asking for 10 min are retried, after 30 s and after the 60 s cap
// of workflow time, and the prompt then succeeds.
func TestModelCallRetriesRateLimitsAfterRetryAfter(t *testing.T) {
	m, res := runStatus(t, statusReply{429, "rate_limit_error", "30"}, statusReply{529, "overloaded_error", "600"})
	if res.Error != nil || res.Result.Message.Text() != "Through." {
		t.Fatalf("prompt result %+v", res)
	}
	if len(m.at) != 3 {
		t.Fatalf("%d requests, want 3 (429, 529, success)", len(m.at))
	}
	if gap := m.at[1].Sub(m.at[0]); gap < 30*time.Second || gap > 31*time.Second {
		t.Errorf("retry after the 429 came %v later, want its Retry-After of 30s", gap)
	}
	if gap := m.at[2].Sub(m.at[1]); gap < MaxRetryDelay || gap > MaxRetryDelay+time.Second {
		t.Errorf("retry after the 529 came %v later, want the %v cap of its 600s Retry-After", gap, MaxRetryDelay)
	}
}

// TestModelCallDoesNotRetryBadRequests: a 400 is not retried; the prompt
// ends with the provider's error.
func TestModelCallDoesNotRetryBadRequests(t *testing.T) {
	m, res := runStatus(t, statusReply{400, "invalid_request_error", ""})
	if len(m.at) != 1 {
		t.Errorf("%d requests, want 1 (a 400 is not retried)", len(m.at))
	}
	if res.Error == nil || !strings.Contains(res.Error.Text, "400") || !strings.Contains(res.Error.Text, "invalid_request_error") {
		t.Errorf("prompt error %v, want the provider's 400", res.Error)
	}
}

// TestPromptErrorKeepsItsKind: a prompt stopped by the continuation limit
// (Spec.MaxTurns) reports agent.ErrMaxTurns, and errors.Is still answers
// after the result's trip through JSON (as Client.Prompt returns it).
func TestPromptErrorKeepsItsKind(t *testing.T) {
	m := &model{t: t, replies: func(i int, _ string) replay.Response { // a tool call every time
		return turn(t, use(fmt.Sprintf("toolu_m%d", i), "glob", `{"pattern":"*"}`))
	}}
	h := newHarness(t, WorkerOptions{Options: options(t.TempDir(), m, session.NewMemory())})
	h.prompt("Loop.")
	h.run(Spec{SessionID: "s-max", MaxTurns: 1})
	if len(h.results) != 1 || h.results[0].Error == nil {
		t.Fatalf("results %+v, want a max-turns error", h.results)
	}
	b, err := json.Marshal(h.results[0])
	if err != nil {
		t.Fatal(err)
	}
	var back PromptResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(back.Error, agent.ErrMaxTurns) || len(m.seen()) != 2 {
		t.Errorf("error %v after %d requests, want agent.ErrMaxTurns after 2 (MaxTurns 1)", back.Error, len(m.seen()))
	}
}
