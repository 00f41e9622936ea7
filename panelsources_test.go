package strata_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
)

// The panels layout gets its fixed panels' sources from the runtime: the
// design's "Todo (P1) | TodoState in memory" is the todo_list tool's lists
// (read before every request), "Library (P2) | agents, skills, commands"
// the workspace's agent files, "Statistics (P3)" the usage so far. Every
// ProviderRequest event carries the Breakdown with each panel's cache hit
// and cost (step 7).
func TestPanelsShowTodoListsLibraryAndStatistics(t *testing.T) {
	dir := workspaceDir(t)
	list := `{"id":"1700000000","description":"Ship the release","tasks":[{"task_description":"tag it","completed":true},{"task_description":"announce it","completed":false}]}`
	p := filepath.Join(dir, tool.TodoDir, "1700000000.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	reply := replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}, Usage: llm.Usage{Input: 1200, Output: 30}}
	srv := replayServer(t, llm.APIAnthropic, reply, reply)
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", Layout: "panels", ProviderName: "anthropic",
		BaseURL: srv.URL(), Mode: agent.ModeAll, Store: session.NewMemory(), Model: "claude-sonnet-4-5"})
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var requests []event.Event
	s.Subscribe(func(e event.Event) {
		if e.Kind == event.ProviderRequest {
			requests = append(requests, e)
		}
	})
	for _, q := range []string{"what is left?", "and then?"} {
		if _, err := s.Prompt(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Received()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	first, second := string(got[0].Body), string(got[1].Body)
	for _, want := range []string{
		`======= [P1] Todo List =======\n[1700000000] Ship the release\n- [x] tag it\n- [ ] announce it`,
		`======= [P2] Library =======\nAgents:\n- dev:  (.kiro/agents/dev.json)`,
		`======= [P4] Tools =======\n`,
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first request lacks %q", want)
		}
	}
	if strings.Contains(first, "[P3] Statistics") {
		t.Error("no statistics before any model call")
	}
	if !strings.Contains(second, `======= [P3] Statistics =======\nTokens used so far: 1200 input, 0 cache read, 0 cache write, 30 output`) {
		t.Errorf("second request lacks the statistics:\n%s", second)
	}
	if len(requests) != 2 || requests[1].Breakdown == nil {
		t.Fatalf("provider_request events: %+v", requests)
	}
	hits := 0
	for _, sp := range requests[1].Breakdown.Spans {
		if sp.Cache != nil && sp.Cache.Hit {
			hits++
		}
	}
	if hits == 0 {
		t.Errorf("the second request's unchanged leading panels should be cache hits: %s", mustJSON(requests[1].Breakdown))
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// Detached chunks reach the panels layout one panel each (the design's
// "splits the oldest messages into a frozen ConversationHistory panel"),
// and with CompactTLDR their long messages show the tl;dr the same
// provider wrote.
func TestCompactionMakesOneHistoryPanelPerChunk(t *testing.T) {
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
	ws := openWorkspace(t, strata.Options{Dir: workspaceDir(t), Agent: "dev", Layout: "panels", ProviderName: "anthropic",
		BaseURL: srv.URL(), Mode: agent.ModeAll, Compaction: &tiny, CompactTLDR: true})
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 4 {
		q := fmt.Sprintf("question %d: %s", i, strings.Repeat("explain the build in detail, step by step. ", 4))
		if _, err := s.Prompt(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	var last string
	for _, r := range srv.Received() {
		if !strings.Contains(string(r.Body), "Summarize the following message") {
			last = string(r.Body)
		}
	}
	chats := regexp.MustCompile(`======= \[P\d+\] Chat [^=]*=======`).FindAllString(last, -1)
	if len(chats) != 2 || chats[0] == chats[1] {
		t.Fatalf("history panels in the last request: %q", chats)
	}
	if strings.Contains(last, "Conversation Summary") {
		t.Error("chunks must not also form a growing summary panel")
	}
	if n := strings.Count(last, "[user, tl;dr] tl;dr of a long prompt"); n != 2 {
		t.Errorf("%d tl;dr entries in the history panels; want 2", n)
	}
}

// The tl;dr requests of --compact-tldr are model calls: their usage counts
// in the prompt's Result, the stored turns (so the session's totals) and
// the events (each Compaction event carries its chunk's tl;dr usage; the
// turn's TurnEnd includes it; ProviderResponse stays the model call's).
func TestTLDRRequestsCountInUsage(t *testing.T) {
	answer, err := replay.AnthropicStream("m", llm.Usage{Input: 10, Output: 2}, llm.StopEndTurn, llm.TextBlock("answer"))
	if err != nil {
		t.Fatal(err)
	}
	tldr, err := replay.AnthropicStream("m", llm.Usage{Input: 1000, Output: 7}, llm.StopEndTurn, llm.TextBlock("tl;dr of a long prompt"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewResponder(func(r replay.Request) replay.Response {
		if strings.Contains(string(r.Body), "Summarize the following message") {
			return tldr
		}
		return answer
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tiny := compact.Policy{ChunkMinMessages: 2, ChunkMinTokens: 1, KeepMinMessages: 2, KeepMinTokens: 1}
	ws := openWorkspace(t, strata.Options{Dir: workspaceDir(t), Agent: "dev", Layout: "panels", ProviderName: "anthropic",
		BaseURL: srv.URL(), Mode: agent.ModeAll, Compaction: &tiny, CompactTLDR: true})
	var compacted, turnEnds, responses llm.Usage
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{OnEventSync: func(e event.Event) {
		if e.Usage == nil {
			return
		}
		switch e.Kind {
		case event.Compaction:
			compacted = compacted.Add(*e.Usage)
		case event.TurnEnd:
			turnEnds = turnEnds.Add(*e.Usage)
		case event.ProviderResponse:
			responses = responses.Add(*e.Usage)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var total llm.Usage
	for i := range 4 {
		res, err := s.Prompt(context.Background(), fmt.Sprintf("question %d: %s", i, strings.Repeat("explain the build in detail, step by step. ", 4)))
		if err != nil {
			t.Fatal(err)
		}
		total = total.Add(res.Usage)
	}
	calls, tldrs := 0, 0
	for _, r := range srv.Received() {
		if strings.Contains(string(r.Body), "Summarize the following message") {
			tldrs++
		} else {
			calls++
		}
	}
	if tldrs == 0 {
		t.Fatal("no tl;dr request was made")
	}
	scale := func(u llm.Usage, n int) llm.Usage {
		var s llm.Usage
		for range n {
			s = s.Add(u)
		}
		return s
	}
	wantTLDR := scale(llm.Usage{Input: 1000, Output: 7, Total: 1007}, tldrs)
	want := scale(llm.Usage{Input: 10, Output: 2, Total: 12}, calls).Add(wantTLDR)
	if total != want {
		t.Errorf("prompts' usage %+v; want %+v (%d answers, %d tl;dr requests)", total, want, calls, tldrs)
	}
	if compacted != wantTLDR || turnEnds != want || responses != scale(llm.Usage{Input: 10, Output: 2, Total: 12}, calls) {
		t.Errorf("events: compaction %+v (want %+v), turn_end %+v (want %+v), provider_response %+v", compacted, wantTLDR, turnEnds, want, responses)
	}
	d, err := ws.Store().LoadSession(context.Background(), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	var stored llm.Usage
	for _, tr := range d.Turns {
		stored = stored.Add(tr.Usage)
	}
	if stored != want {
		t.Errorf("stored turns' usage %+v; want %+v", stored, want)
	}
}
