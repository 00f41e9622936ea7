package tiered

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// session builds the context of request n of a growing conversation where
// a.go never changes and b.go changes at request 5.
func session(n int) *prompt.Context {
	c := &prompt.Context{Model: "m", System: "sys", Reminder: "Close every edit block."}
	b := "b v1"
	if n >= 5 {
		b = "b v2"
	}
	c.Files = []prompt.File{{Path: "a.go", Content: "package a"}, {Path: "b.go", Content: b}}
	c.History = append(c.History, llm.UserText("q0"))
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("t%d", i)
		c.History = append(c.History,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUseBlock(id, "fs_read", json.RawMessage(`{}`))}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(id, "ok", false)}})
	}
	return c
}

func TestTiersBreakpointsAndPairing(t *testing.T) {
	l := New()
	var req *llm.Request
	for n := 0; n < 16; n++ {
		var err error
		if req, _, err = l.Assemble(session(n)); err != nil {
			t.Fatal(err)
		}
		if len(req.Breakpoints) > llm.MaxBreakpoints {
			t.Fatalf("request %d: %d breakpoints", n, len(req.Breakpoints))
		}
		if err := req.Validate(); err != nil {
			t.Fatalf("request %d: %v", n, err)
		}
		// Every tool_use is answered by the very next message.
		for i, m := range req.Messages {
			for _, b := range m.ToolUses() {
				if i+1 >= len(req.Messages) || !strings.Contains(fmt.Sprint(req.Messages[i+1].Content), b.ID) {
					t.Fatalf("request %d: tool_use %s at message %d is not followed by its result", n, b.ID, i)
				}
			}
		}
	}
	// a.go has been stable for 16 requests: it graduated to L0 (system).
	if !strings.Contains(req.SystemText(), FilesL0Header+Fenced("a.go", "package a")) {
		t.Errorf("a.go not in L0 system:\n%s", req.SystemText())
	}
	// b.go changed at request 5: 10 unchanged requests since → L1.
	found := false
	for _, m := range req.Messages {
		if strings.HasPrefix(m.Text(), FilesL1Header) && strings.Contains(m.Text(), "b v2") {
			found = true
		}
	}
	if !found {
		t.Error("b.go not in the L1 block")
	}
	if len(req.Breakpoints) == 0 {
		t.Error("no breakpoints after 16 requests")
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Content[len(last.Content)-1].Type != llm.BlockToolResult {
		t.Error("current prompt lost")
	}
}

func TestFirstRequestIsAllActive(t *testing.T) {
	req, _, err := New().Assemble(session(0))
	if err != nil {
		t.Fatal(err)
	}
	// system (breakpoint on it), working files pair, current prompt with reminder.
	if len(req.Messages) != 3 || !strings.HasPrefix(req.Messages[0].Text(), FilesActiveHeader) || req.Messages[1].Text() != "Ok." {
		t.Fatalf("messages: %+v", req.Messages)
	}
	if got := req.Messages[2].Text(); got != "q0\n\nClose every edit block." {
		t.Errorf("current prompt %q", got)
	}
	if len(req.Breakpoints) != 1 || req.Breakpoints[0].Target != llm.BreakSystem {
		t.Errorf("breakpoints %+v, want one on the system prompt", req.Breakpoints)
	}
}

// Two fresh layouts fed the same contexts produce identical requests.
func TestDeterministic(t *testing.T) {
	a, b := New(), New()
	for n := 0; n < 10; n++ {
		ra, _, _ := a.Assemble(session(n))
		rb, _, _ := b.Assemble(session(n))
		ja, _ := json.Marshal(ra)
		jb, _ := json.Marshal(rb)
		if string(ja) != string(jb) {
			t.Fatalf("request %d differs", n)
		}
	}
}
