package tiered

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/stability"
)

// fixed returns a tiered layout with thresholds 3/6/9/12, so the tests'
// request counts do not depend on stability.DefaultThresholds.
func fixed() *Layout {
	return NewWith(stability.Thresholds{L3: 3, L2: 6, L1: 9, L0: 12}, false)
}

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
	l := fixed()
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
	if !strings.Contains(req.SystemText(), designFilesL0+designFenced("a.go", "package a")) {
		t.Errorf("a.go not in L0 system:\n%s", req.SystemText())
	}
	// b.go changed at request 5: 10 unchanged requests since, so it is
	// in a cached tier again (which one depends on when tiers broke).
	if l.tracker.N("file:b.go") != 10 {
		t.Errorf("b.go N = %d, want 10", l.tracker.N("file:b.go"))
	}
	found := false
	for _, m := range req.Messages {
		for _, h := range []string{designFilesL1, designFilesL2, designFilesL3} {
			if strings.Contains(m.Text(), h) && strings.Contains(m.Text(), designFenced("b.go", "b v2")) {
				found = true
			}
		}
	}
	if !found {
		t.Error("b.go not in an L1–L3 block")
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
	if len(req.Messages) != 3 || !strings.HasPrefix(req.Messages[0].Text(), designFilesActive) || req.Messages[1].Text() != "Ok." {
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

// chat builds request n of a plain conversation (no tools) with one stable
// file: the tiered-assembly design's own setting.
func chat(n int) *prompt.Context {
	c := &prompt.Context{Model: "m", System: "sys"}
	c.Files = []prompt.File{{Path: "src/main.py", Content: "print(1)"}}
	for i := 0; i < n; i++ {
		c.History = append(c.History, llm.UserText(fmt.Sprintf("prompt %d", i)), llm.AssistantText(fmt.Sprintf("answer %d", i)))
	}
	c.History = append(c.History, llm.UserText(fmt.Sprintf("prompt %d", n)))
	return c
}

// The design's message array: "[N] user L1: symbols + files / [N+1]
// assistant "Ok." / [N+] L1 history pairs / ── cache breakpoint ──", and the
// same for L2 and L3. Roles alternate natively: each tier's pair, then its
// history pairs, then its breakpoint.
func TestTierBlockIsPairThenHistoryThenBreakpoint(t *testing.T) {
	l := fixed()
	var req *llm.Request
	for n := 0; n < 8; n++ {
		var err error
		if req, _, err = l.Assemble(chat(n)); err != nil {
			t.Fatal(err)
		}
	}
	// Request 8: src/main.py has been unchanged for 7 requests (L2 at 6);
	// the oldest history pairs are in L3/L2 too.
	var roles []string
	for _, m := range req.Messages {
		roles = append(roles, string(m.Role))
	}
	for i := 1; i < len(roles); i++ {
		if roles[i] == roles[i-1] {
			t.Fatalf("messages %d and %d are both %s: %v", i-1, i, roles[i], roles)
		}
	}
	pair := -1
	for i, m := range req.Messages {
		if strings.HasPrefix(m.Text(), designFilesL2+designFenced("src/main.py", "print(1)")) {
			pair = i
		}
	}
	if pair < 0 {
		t.Fatalf("no L2 block (%q) in %v", designFilesL2, roles)
	}
	if req.Messages[pair].Role != llm.RoleUser || req.Messages[pair+1].Text() != "Ok." {
		t.Fatalf("L2 block is not a user message answered by \"Ok.\": %+v", req.Messages[pair:pair+2])
	}
	// Then native history pairs of the tier, then the breakpoint on the last one.
	next := req.Messages[pair+2]
	if next.Role != llm.RoleUser || !strings.HasPrefix(next.Text(), "prompt ") {
		t.Fatalf("after the L2 pair: %q, want a native user prompt", next.Text())
	}
	bp := -1
	for _, b := range req.Breakpoints {
		if b.Target == llm.BreakMessage && b.Message > pair && (bp < 0 || b.Message < bp) {
			bp = b.Message
		}
	}
	if bp < 0 || req.Messages[bp].Role != llm.RoleAssistant || !strings.HasPrefix(req.Messages[bp].Text(), "answer ") {
		t.Fatalf("the L2 breakpoint is on message %d, want the last native answer of the tier", bp)
	}
}

// A section pair never separates a tool_use from its tool_result: in a tool
// loop the tier's text is sent after the tool results.
func TestToolLoopKeepsResultNextToCall(t *testing.T) {
	l := fixed()
	for n := 0; n < 12; n++ {
		req, _, err := l.Assemble(session(n))
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(req.Messages); i++ {
			if req.Messages[i].Role == req.Messages[i-1].Role {
				t.Fatalf("request %d: messages %d and %d are both %s", n, i-1, i, req.Messages[i].Role)
			}
		}
	}
}

func TestTieredFlatHasNoBreakpoints(t *testing.T) {
	l, err := prompt.Lookup("tiered-flat")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 16; n++ {
		req, bd, err := l.Assemble(session(n))
		if err != nil {
			t.Fatal(err)
		}
		if len(req.Breakpoints) != 0 || bd.Layout != "tiered-flat" {
			t.Fatalf("request %d: %d breakpoints, layout %q", n, len(req.Breakpoints), bd.Layout)
		}
		if n == 15 && !strings.Contains(req.Messages[len(req.Messages)-1].Text(), designFilesActive) &&
			!strings.HasPrefix(req.Messages[0].Text(), designFilesActive) {
			t.Errorf("the flat fallback does not send every file as a working file")
		}
	}
}
