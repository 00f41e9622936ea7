package strata_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// kiro's layer 1, "Compressed history from prior turns": with a summariser
// configured (--compact --compact-tldr) the detached turns reach the
// context message's first entry as a summary — one model-written tl;dr per
// long message — not as the messages themselves (docs/kiro.md, rule 9).
func TestKiroLayerOneIsASummaryWithASummariser(t *testing.T) {
	srv, err := replay.NewResponder(func(r replay.Request) replay.Response {
		text := "answer"
		if strings.Contains(string(r.Body), "Summarize the following message") {
			text = "tl;dr of a long prompt"
		}
		resp, _ := replay.Text(llm.APIAnthropic, text)
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tiny := compact.Policy{ChunkMinMessages: 2, ChunkMinTokens: 1, KeepMinMessages: 2, KeepMinTokens: 1}
	ws := openWorkspace(t, strata.Options{Dir: workspaceDir(t), Agent: "dev", Layout: "kiro", ProviderName: "anthropic",
		BaseURL: srv.URL(), Mode: agent.ModeAll, Compaction: &tiny, CompactTLDR: true})
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	long := strings.Repeat("explain the build in detail, step by step. ", 4)
	for i := range 3 {
		if _, err := s.Prompt(context.Background(), fmt.Sprintf("question %d: %s", i, long)); err != nil {
			t.Fatal(err)
		}
	}
	var last string
	for _, r := range srv.Received() {
		if !strings.Contains(string(r.Body), "Summarize the following message") {
			last = string(r.Body)
		}
	}
	first := `--- CONTEXT ENTRY BEGIN ---\nThis summary contains ALL relevant information from our previous conversation`
	if !strings.Contains(last, first) || !strings.Contains(last, `[user, tl;dr] tl;dr of a long prompt`) || strings.Contains(last, "question 0: explain") {
		t.Errorf("layer 1 is not a summary of the detached turns:\n%.3000s", last)
	}
}
