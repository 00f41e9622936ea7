package peers_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/peers"
)

// conversation is a small hand-made session: a prompt answered after two
// tool round-trips, then a second prompt in the middle of a tool call.
//
//	0 user      fix the bug
//	1 assistant text + tool_use t1
//	2 user      tool_result t1
//	3 assistant thinking + tool_use t2
//	4 user      tool_result t2
//	5 assistant done
//	6 user      now the README
//	7 assistant tool_use t3
//	8 user      tool_result t3
func conversation() []llm.Message {
	in := json.RawMessage(`{"path":"a.go"}`)
	return []llm.Message{
		llm.UserText("fix the bug"),
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("looking"), llm.ToolUseBlock("t1", "fs_read", in)}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("t1", "package a", false)}},
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockThinking, Text: "hmm", Signature: "sig"}, llm.ToolUseBlock("t2", "fs_write", in)}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("t2", "ok", false)}},
		llm.AssistantText("done"),
		llm.UserText("now the README"),
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUseBlock("t3", "fs_read", json.RawMessage(`{"path":"README.md"}`))}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("t3", "# a", false)}},
	}
}

// testContext is conversation() with every context item set, two tools in
// non-alphabetical order, a reminder and a conversation id.
func testContext() *prompt.Context {
	schema := json.RawMessage(`{"type":"object"}`)
	return &prompt.Context{Model: "m", System: "Be brief.", History: conversation(),
		Tools:   []llm.ToolSpec{{Name: "zeta", InputSchema: schema}, {Name: "alpha", InputSchema: schema}},
		Summary: "earlier work", Knowledge: "kb: docs", Task: "fix bugs", HookOutputs: []string{"branch main"},
		Files:    []prompt.File{{Path: "a.go", Content: "package a"}},
		Skills:   []prompt.Skill{{Name: "pdf", Description: "read PDFs", Path: "skills/pdf/SKILL.md"}},
		FileTree: "a.go\nREADME.md", Reminder: "Answer in English.", ConversationID: "loop-1"}
}

// breakpoints describes req's breakpoints as "tools", "system:B" and
// "msg:M.B", with "@TTL" when a TTL is set, in the order the request lists
// them.
func breakpoints(req *llm.Request) string {
	var out []string
	for _, bp := range req.Breakpoints {
		s := string(bp.Target)
		switch bp.Target {
		case llm.BreakSystem:
			s = fmt.Sprintf("system:%d", bp.Block)
		case llm.BreakMessage:
			s = fmt.Sprintf("msg:%d.%d", bp.Message, bp.Block)
		}
		if bp.TTL != "" {
			s += "@" + bp.TTL
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func toolNames(req *llm.Request) string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return strings.Join(out, ",")
}

func assemble(t *testing.T, name string, c *prompt.Context) (*llm.Request, *prompt.Breakdown) {
	t.Helper()
	l, err := prompt.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	req, bd, err := l.Assemble(c)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := req.Validate(); err != nil {
		t.Fatalf("%s: invalid request: %v", name, err)
	}
	return req, bd
}

// Each peer puts its breakpoints exactly where its source does, with the
// tools, system blocks and messages in its order; the reminder is appended
// to the last message after the breakpoints; the caller's context is not
// modified.
func TestBreakpointPlacement(t *testing.T) {
	all := "## Conversation summary\n\nearlier work\n\n## Knowledge bases\n\nkb: docs\n\n## Task\n\nfix bugs\n\n" +
		"## Hook output\n\nbranch main\n\n## File: a.go\n\n```\npackage a\n```\n\n" +
		"## Skills\n\npdf: read PDFs (file: skills/pdf/SKILL.md)\n\n## Repository files\n\na.go\nREADME.md"
	cases := []struct {
		name, bps, tools string
		system           []string
		messages         int    // request messages
		key              string // prompt_cache_key
	}{
		{name: "crush", bps: "tools system:0 msg:7.0 msg:8.0", tools: "zeta,alpha", system: []string{"Be brief.\n\n" + all}, messages: 9},
		{name: "opencode", bps: "system:0 msg:7.0 msg:8.0", tools: "alpha,zeta", system: []string{"Be brief.\n\n" + all}, messages: 9, key: "loop-1"},
		{name: "cline", bps: "system:0 msg:6.0 msg:8.0", tools: "zeta,alpha", system: []string{"Be brief.\n\n" + all}, messages: 9},
		{name: "goose", bps: "tools system:0 msg:6.0 msg:8.0", tools: "zeta,alpha", system: []string{"Be brief.\n\n" + all}, messages: 9},
		{name: "openhands", bps: "system:0 msg:8.0", tools: "zeta,alpha", system: []string{"Be brief.", all}, messages: 9, key: "loop-1"},
		{name: "langchain", bps: "msg:8.0@5m", tools: "zeta,alpha", system: []string{"Be brief.\n\n" + all}, messages: 9},
		// aider: read-only pair 0–1, repo map 2–3, summary 4–5, done 6–11,
		// chat files 12–13, current turn 14–16.
		{name: "aider", bps: "system:0 msg:3.0 msg:13.0", tools: "zeta,alpha", system: []string{"Be brief."}, messages: 17},
		{name: "codex", bps: "", tools: "zeta,alpha", system: []string{"Be brief."}, messages: 9, key: "loop-1"},
	}
	if len(cases) != len(peers.Names()) {
		t.Fatalf("%d cases for %d peers", len(cases), len(peers.Names()))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testContext()
			before := conversation()
			req, bd := assemble(t, tc.name, c)
			if got := breakpoints(req); got != tc.bps {
				t.Errorf("breakpoints %q; want %q", got, tc.bps)
			}
			if bd.Breakpoints != len(req.Breakpoints) || bd.Layout != tc.name {
				t.Errorf("breakdown says %d breakpoints, layout %q", bd.Breakpoints, bd.Layout)
			}
			if got := toolNames(req); got != tc.tools {
				t.Errorf("tools %s; want %s", got, tc.tools)
			}
			var sys []string
			for _, b := range req.System {
				sys = append(sys, b.Text)
			}
			if !reflect.DeepEqual(sys, tc.system) {
				t.Errorf("system blocks\n%q\nwant\n%q", sys, tc.system)
			}
			if len(req.Messages) != tc.messages || req.PromptCacheKey != tc.key {
				t.Fatalf("%d messages, key %q; want %d, %q", len(req.Messages), req.PromptCacheKey, tc.messages, tc.key)
			}
			last := req.Messages[len(req.Messages)-1].Content
			if len(last) != 2 || last[1].Text != "Answer in English." || last[0].Type != llm.BlockToolResult {
				t.Errorf("last message %+v: want the tool result then the reminder", last)
			}
			if !reflect.DeepEqual(c.History, before) {
				t.Error("the context's history was modified")
			}
			sum := 0
			for _, s := range bd.Spans {
				if s.Tokens <= 0 {
					t.Errorf("span %q has %d tokens", s.Name, s.Tokens)
				}
				sum += s.Tokens
			}
			if sum != bd.TotalTokens {
				t.Errorf("spans sum to %d tokens; total %d", sum, bd.TotalTokens)
			}
		})
	}
}

// Aider re-sends its context as user/"Ok." pairs around the done history:
// read-only items, the repository map, the summary, the earlier turns, the
// chat files (every working file, whole), then the current turn.
func TestAiderChunkOrder(t *testing.T) {
	req, bd := assemble(t, "aider", testContext())
	var got []string
	for _, m := range req.Messages {
		got = append(got, string(m.Role[0])+":"+prompt.Preview(m.Text(), 18))
	}
	want := []string{"u:Reference material…", "a:Ok.", "u:Map of the reposit…", "a:Ok.", "u:Summary of the con…", "a:Ok.",
		"u:fix the bug", "a:looking", "u:", "a:", "u:", "a:done",
		"u:Files added to the…", "a:Ok.", "u:now the README", "a:", "u:Answer in English."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages\n%q\nwant\n%q", got, want)
	}
	if ro := req.Messages[0].Text(); !strings.Contains(ro, "## Task") || strings.Contains(ro, "a.go") {
		t.Errorf("read-only pair: %q", ro)
	}
	if files := req.Messages[12].Text(); !strings.Contains(files, "## File: a.go\n\n```\npackage a\n```") {
		t.Errorf("chat files pair: %q", files)
	}
	var spans []string
	for _, s := range bd.Spans {
		spans = append(spans, fmt.Sprintf("%s %d-%d %v", s.Name, s.First, s.Last, s.Break))
	}
	wantSpans := []string{"tools -1--1 false", "system -1--1 true", "read-only context 0-1 false", "repository map 2-3 true",
		"done (earlier turns) 4-11 false", "chat files 12-13 true", "current turn 14-16 false", "reminder 16-16 false"}
	if !reflect.DeepEqual(spans, wantSpans) {
		t.Errorf("spans\n%q\nwant\n%q", spans, wantSpans)
	}
	// Without a repository map the read-only pair carries the breakpoint;
	// without files the canned "no files" pair still closes the chat files.
	c := testContext()
	c.FileTree, c.Files = "", nil
	req, _ = assemble(t, "aider", c)
	if got := breakpoints(req); got != "system:0 msg:1.0 msg:11.0" || req.Messages[10].Text() != "No files have been added to the chat yet." {
		t.Errorf("breakpoints %q, message 10 %q", got, req.Messages[10].Text())
	}
}

// With no system prompt crush marks message 0 (its PrepareStep marks index
// 0 when no system message precedes the first chat message); openhands then
// marks its lone dynamic system block.
func TestNoSystemPrompt(t *testing.T) {
	c := testContext()
	c.System, c.Summary, c.Knowledge, c.Task, c.HookOutputs, c.Files, c.Skills, c.FileTree = "", "", "", "", nil, nil, nil, ""
	req, _ := assemble(t, "crush", c)
	if got := breakpoints(req); got != "tools msg:0.0 msg:7.0 msg:8.0" {
		t.Errorf("crush: %q", got)
	}
	c = testContext()
	c.System = ""
	req, _ = assemble(t, "openhands", c)
	if got := breakpoints(req); got != "system:0 msg:8.0" || len(req.System) != 1 {
		t.Errorf("openhands: %q, %d system blocks", got, len(req.System))
	}
}

// A breakpoint never lands on a thinking block: a message ending in one is
// marked on its last block that can carry cache_control.
func TestBreakpointSkipsThinking(t *testing.T) {
	c := testContext()
	c.History = c.History[:6]
	c.History[5] = llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("done"), {Type: llm.BlockRedactedThinking, Data: []byte("x")}}}
	c.History = append(c.History, llm.UserText("next"))
	req, _ := assemble(t, "crush", c)
	if got := breakpoints(req); got != "tools system:0 msg:5.0 msg:6.0" {
		t.Errorf("crush: %q", got)
	}
}

// Codex appends and never rewrites: the first request carries the developer
// and user context texts before the first prompt; when a file changes, the
// next request keeps the earlier bytes and puts the changed item alone
// before the newest user message.
func TestCodexAppendsContext(t *testing.T) {
	l, err := prompt.Lookup("codex")
	if err != nil {
		t.Fatal(err)
	}
	c := testContext()
	c.History, c.Reminder = conversation()[:1], ""
	first, _, err := l.Assemble(c)
	if err != nil {
		t.Fatal(err)
	}
	m0 := first.Messages[0].Content
	if len(m0) != 3 || !strings.HasPrefix(m0[0].Text, "## Knowledge bases") || !strings.HasPrefix(m0[1].Text, "## Conversation summary") ||
		m0[2].Text != "fix the bug" || strings.Contains(m0[0].Text, "a.go") {
		t.Fatalf("message 0 %+v", m0)
	}
	c = testContext()
	c.History, c.Reminder = conversation()[:3], ""
	same, _, err := l.Assemble(c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(same.Messages[0], first.Messages[0]) || len(same.Messages[2].Content) != 1 {
		t.Fatalf("unchanged context: message 0 %+v, message 2 %+v", same.Messages[0].Content, same.Messages[2].Content)
	}
	c.History = conversation()[:5]
	c.Files = []prompt.File{{Path: "a.go", Content: "package a // fixed"}}
	next, bd, err := l.Assemble(c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(next.Messages[0], first.Messages[0]) {
		t.Errorf("message 0 rewritten: %+v", next.Messages[0].Content)
	}
	m4 := next.Messages[4].Content
	if len(m4) != 2 || m4[0].Text != "## File: a.go\n\n```\npackage a // fixed\n```" || m4[1].Type != llm.BlockToolResult {
		t.Errorf("message 4 %+v: want the changed file alone, then the tool result", m4)
	}
	if len(bd.Spans) != 6 || !strings.HasPrefix(bd.Spans[4].Name, "user context (before message 4)") {
		var names []string
		for _, s := range bd.Spans {
			names = append(names, s.Name)
		}
		t.Errorf("spans %q", names)
	}
	// A shorter history (a new conversation) forgets the later placement.
	c.History = conversation()[:1]
	again, _, err := l.Assemble(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Messages[0].Content) != 4 { // first versions, the changed context, the prompt
		t.Errorf("message 0 after a restart: %+v", again.Messages[0].Content)
	}
}

// An invalid history is an error naming the layout, never a panic.
func TestInvalidHistory(t *testing.T) {
	for _, name := range peers.Names() {
		l, err := prompt.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c := testContext()
		c.History = []llm.Message{llm.AssistantText("hi")}
		if _, _, err := l.Assemble(c); err == nil || !strings.Contains(err.Error(), name+": ") {
			t.Errorf("%s: err %v", name, err)
		}
	}
}
