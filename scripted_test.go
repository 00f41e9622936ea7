package strata_test

import (
	"sync"
	"testing"

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
