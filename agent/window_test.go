package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// The message-loop design, COMPOSE_REQUEST: "Run compaction if the composed
// size would exceed the model's context window." Without a compaction
// policy, a request that would not fit the window loses its oldest prompts
// (a frozen notice says which) until it fits; one that fits is untouched.
func TestCompactionWhenTheWindowWouldBeExceeded(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 40) // ≈1,080 bytes ≈ 270 tokens
	var script []replay.Response
	for i := 0; i < 3; i++ {
		r, err := replay.Text(llm.APIAnthropic, fmt.Sprintf("answer %d", i))
		if err != nil {
			t.Fatal(err)
		}
		script = append(script, r)
	}
	// 700 tokens: one or two long prompts fit, three do not.
	a, rec, bus, srv := noopAgent(t, Config{ContextWindow: 700}, script)
	for i := 0; i < 3; i++ {
		if _, err := a.Prompt(context.Background(), fmt.Sprintf("prompt %d: %s", i, long)); err != nil {
			t.Fatal(err)
		}
	}
	bus.Close()
	var counts []int
	var system []string
	for _, r := range srv.Received() {
		var b struct {
			System   []struct{ Text string }
			Messages []json.RawMessage
		}
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, len(b.Messages))
		s := ""
		for _, x := range b.System {
			s += x.Text
		}
		system = append(system, s)
	}
	if fmt.Sprint(counts) != "[1 3 3]" {
		t.Fatalf("messages per request %v; want [1 3 3]: the third request drops the first prompt and answer", counts)
	}
	if strings.Contains(system[1], "removed to fit") || !strings.Contains(system[2], "Conversation history, messages 1–2") ||
		!strings.Contains(system[2], "removed to fit the model's context window of 700 tokens") {
		t.Errorf("system prompts:\n%s\n---\n%s", system[1], system[2])
	}
	var compactions []event.Event
	for _, e := range rec.ev {
		if e.Kind == event.Compaction {
			compactions = append(compactions, e)
		}
	}
	if len(compactions) != 1 || *compactions[0].Turn != nthTurn(rec.ev, 2) || !strings.Contains(compactions[0].Text, "exceeded the context window of 700 tokens") {
		t.Errorf("compaction events %+v; want one, in the third turn, naming the window", compactions)
	}
	if len(a.History()) != 6 {
		t.Errorf("history has %d messages; compaction must keep every message", len(a.History()))
	}
	// A restored loop detaches the same chunk: its next request starts alike.
	b, err := Restore(a.eng.cfg, a.LoopID(), a.History(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.st.Chunks) != 1 || b.st.Chunks[0] != a.st.Chunks[0] {
		t.Errorf("restored chunks %+v; want %+v", b.st.Chunks, a.st.Chunks)
	}
}

// With a summariser configured (--compact-tldr), compaction for the window
// summarises instead of dropping: the chunk keeps the messages with a
// tl;dr of each long text, and the tl;dr requests count in the turn's usage.
func TestWindowCompactionSummarisesWhenASummariserIsSet(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	var script []replay.Response
	for i := 0; i < 3; i++ {
		script = append(script, must(replay.Text(llm.APIAnthropic, fmt.Sprintf("answer %d", i))))
	}
	summaries := 0
	pol := &compact.Policy{ChunkMinMessages: 1 << 20, Summarize: func(_ context.Context, text string) (string, llm.Usage, error) {
		summaries++
		return "a long lorem ipsum prompt", llm.Usage{Input: 10, Output: 5, Total: 15}, nil
	}}
	a, _, bus, srv := noopAgent(t, Config{ContextWindow: 700, Compaction: pol}, script)
	var last *Result
	for i := 0; i < 3; i++ {
		res, err := a.Prompt(context.Background(), fmt.Sprintf("prompt %d: %s", i, long))
		if err != nil {
			t.Fatal(err)
		}
		last = res
	}
	bus.Close()
	var b struct{ System []struct{ Text string } }
	if err := json.Unmarshal(srv.Received()[2].Body, &b); err != nil {
		t.Fatal(err)
	}
	system := ""
	for _, x := range b.System {
		system += x.Text
	}
	if summaries == 0 || !strings.Contains(system, "summarized to fit the model's context window of 700 tokens") ||
		!strings.Contains(system, "a long lorem ipsum prompt") || strings.Contains(system, "removed to fit") {
		t.Fatalf("third request's system prompt (%d summaries):\n%s", summaries, system)
	}
	if last.Usage.Total < 15 {
		t.Errorf("the prompt's usage %+v does not count the tl;dr requests", last.Usage)
	}
}
