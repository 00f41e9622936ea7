package agent

// For the lead: move this file into agent/ once assembleWithinWindow calls
// compact.WindowChunk (see _lead/README.md). The go tool ignores folders
// starting with "_", so it does not build here.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// The message-loop design's window compaction with a summariser configured
// (docs/loop.md, "compaction"): the oldest prompt is kept as a tl;dr per
// message instead of being removed, and the tl;dr request counts in the
// turn's usage.
func TestWindowCompactionSummarisesWithASummariser(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 40) // ≈270 tokens
	var script []replay.Response
	for i := 0; i < 3; i++ {
		r, err := replay.Text(llm.APIAnthropic, fmt.Sprintf("answer %d", i))
		if err != nil {
			t.Fatal(err)
		}
		script = append(script, r)
	}
	asked := 0
	sum := func(_ context.Context, text string) (string, llm.Usage, error) {
		asked++
		if !strings.HasPrefix(text, "[user] prompt 0: lorem") {
			t.Errorf("tl;dr asked for %.40q", text)
		}
		return "the user sent filler text", llm.Usage{Input: 5, Output: 2}, nil
	}
	// Detach thresholds no conversation here reaches: only the window compacts.
	pol := &compact.Policy{ChunkMinMessages: 1000, KeepMinMessages: 1000, Summarize: sum}
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
	got := srv.Received()
	var b struct{ System []struct{ Text string } }
	if err := json.Unmarshal(got[2].Body, &b); err != nil {
		t.Fatal(err)
	}
	sys := ""
	for _, x := range b.System {
		sys += x.Text
	}
	want := "summarized to fit the model's context window of 700 tokens, one tl;dr per message:\n\n" +
		"[user, tl;dr] the user sent filler text\n\n[assistant] answer 0"
	if !strings.Contains(sys, want) || strings.Contains(sys, "removed to fit") {
		t.Errorf("third request's summary:\n%s\nwant it to contain\n%s", sys, want)
	}
	if asked != 1 || last.Usage.Input < 5 {
		t.Errorf("%d tl;dr requests, usage %+v; want 1, counted in the turn", asked, last.Usage)
	}
}
