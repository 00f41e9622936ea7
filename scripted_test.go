package strata_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// scriptedModel is a model for strata.Options.Respond: next chooses each
// reply from the request body (the Anthropic Messages JSON the real SDK
// sent); every body is kept for the test to inspect.
type scriptedModel struct {
	t    *testing.T
	next func(body string) replay.Reply
	mu   sync.Mutex
	seen []string
}

func newScriptedModel(t *testing.T, next func(body string) replay.Reply) *scriptedModel {
	return &scriptedModel{t: t, next: next}
}

// respond is the Options.Respond function.
func (m *scriptedModel) respond(r replay.Request) replay.Response {
	body := string(r.Body)
	m.mu.Lock()
	m.seen = append(m.seen, body)
	m.mu.Unlock()
	resp, err := replay.Turn(llm.APIAnthropic, m.next(body))
	if err != nil {
		m.t.Errorf("author reply: %v", err)
		return replay.Response{Status: 500, Body: []byte(`{"type":"error","error":{"type":"api_error","message":"bad script"}}`)}
	}
	return resp
}

// bodies returns the request bodies received so far.
func (m *scriptedModel) bodies() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

// writeFile writes content to path, creating its directory.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openScripted opens a workspace on o with m as its model (Anthropic wire)
// and a new session in it; both close when the test ends.
func openScripted(t *testing.T, o strata.Options, m *scriptedModel) (*strata.Workspace, *strata.Session) {
	t.Helper()
	o.ProviderName, o.Respond = "anthropic", m.respond
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
