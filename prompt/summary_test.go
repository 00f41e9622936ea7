package prompt_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Every registered layout places the conversation summary in the request:
// compaction (package compact) hands detached turns over only through it, so
// a layout that dropped it would lose messages.
func TestEveryLayoutPlacesTheSummary(t *testing.T) {
	names := prompt.Names()
	if len(names) < 5 {
		t.Fatalf("layouts %v", names)
	}
	for _, name := range names {
		l, err := prompt.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c := &prompt.Context{Model: "m", System: "sys", Summary: "Conversation history, messages 1–2: MARKER-7f3a",
			History: []llm.Message{llm.UserText("hi")}}
		req, _, err := l.Assemble(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(req)
		if !strings.Contains(string(b), "MARKER-7f3a") {
			t.Errorf("%s drops the summary", name)
		}
	}
}
