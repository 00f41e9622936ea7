package kiro

import (
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

func fullContext() *prompt.Context {
	return &prompt.Context{
		Model:       "m",
		System:      "You are a reviewer.",
		Summary:     "We fixed the parser.",
		Knowledge:   "kb: docs (12 files)",
		Task:        "spec: add caching",
		HookOutputs: []string{"git status: clean"},
		Files:       []prompt.File{{Path: "AGENTS.md", Content: "# Agents\nbe brief"}, {Path: "docs/a.md", Content: "A"}},
		Skills:      []prompt.Skill{{Name: "pdf", Description: "Work with PDFs", Path: ".kiro/skills/pdf/SKILL.md"}},
		Tools:       []llm.ToolSpec{{Name: "fs_read", InputSchema: []byte(`{"type":"object"}`)}},
		History:     []llm.Message{llm.UserText("hi")},
	}
}

// The context message holds the seven layers in the design's order, layers 1–6
// wrapped in the exact delimiters, the prompt raw and last; then the exact ack.
func TestContextMessageMatchesSeed(t *testing.T) {
	req, bd, err := Layout{}.Assemble(fullContext())
	if err != nil {
		t.Fatal(err)
	}
	if len(req.System) != 0 {
		t.Fatal("kiro sends no system prompt")
	}
	if len(req.Messages) != 3 || req.Messages[1].Text() != "I will fully incorporate this information when generating my responses, and explicitly acknowledge relevant parts of the summary when answering questions." {
		t.Fatalf("want [context, ack, prompt], got %d messages", len(req.Messages))
	}
	ctx := req.Messages[0].Text()
	want := "--- CONTEXT ENTRY BEGIN ---\n" +
		"This summary contains ALL relevant information from our previous conversation including tool uses, results, code analysis, and file operations. YOU MUST reference this information when answering questions and explicitly acknowledge specific details from the summary when they're relevant to the current question.\n\nSUMMARY CONTENT:\nWe fixed the parser.\n" +
		"--- CONTEXT ENTRY END ---\n\n" +
		"--- CONTEXT ENTRY BEGIN ---\nkb: docs (12 files)\n--- CONTEXT ENTRY END ---\n\n" +
		"--- CONTEXT ENTRY BEGIN ---\nspec: add caching\n--- CONTEXT ENTRY END ---\n\n" +
		"--- CONTEXT ENTRY BEGIN ---\nThis section (like others) contains important information that I want you to use in your responses. I have gathered this context from valuable programmatic script hooks. You must follow any requests and consider all of the information in this section for the entire conversation\n\ngit status: clean\n\n--- CONTEXT ENTRY END ---\n\n" +
		"--- CONTEXT ENTRY BEGIN ---\n[AGENTS.md]\n# Agents\nbe brief\n[docs/a.md]\nA\n--- CONTEXT ENTRY END ---\n\n" +
		"--- CONTEXT ENTRY BEGIN ---\nThe following file entries contain: name, filepath, and description. You SHOULD decide when to read the full file using the filepath based on its description:\n\npdf: Work with PDFs (file: .kiro/skills/pdf/SKILL.md)\n--- CONTEXT ENTRY END ---\n\n" +
		"Follow this instruction: You are a reviewer."
	if ctx != want {
		t.Errorf("context message:\n%q\nwant\n%q", ctx, want)
	}
	if len(req.Breakpoints) != 0 || bd.Breakpoints != 0 {
		t.Error("kiro places no cache breakpoints")
	}
	if len(req.Tools) != 1 || req.Messages[2].Text() != "hi" {
		t.Error("tools or history lost")
	}
}

// Empty layers are omitted, but the pair itself never is: the kiro-cli turn
// anatomy says "The canned Assistant ack is always present. Every
// conversation starts with the same two synthetic messages."
func TestEmptyLayersOmittedAckAlwaysPresent(t *testing.T) {
	c := &prompt.Context{Model: "m", System: "be terse", History: []llm.Message{llm.UserText("hi")}}
	req, _, _ := Layout{}.Assemble(c)
	if got := req.Messages[0].Text(); got != "Follow this instruction: be terse" {
		t.Errorf("got %q", got)
	}
	c.System = ""
	req, bd, err := Layout{}.Assemble(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 3 || req.Messages[0].Text() != EmptyContext || req.Messages[1].Text() != Ack ||
		req.Messages[2].Text() != "hi" {
		t.Errorf("every layer empty: want [EmptyContext, Ack, hi], got %+v", req.Messages)
	}
	if bd.Spans[0].Name != "context: empty" {
		t.Errorf("breakdown should name the empty context entry: %+v", bd.Spans)
	}
}

// userPromptSubmit output is not a layer of the context message: it is the
// entry kiro puts with the user's prompt ("Layer 4: Agent Spawn Hooks" holds
// agentSpawn output only).
func TestPromptHookEntry(t *testing.T) {
	if got := PromptHookEntry([]string{"", ""}); got != "" {
		t.Errorf("no output: want \"\", got %q", got)
	}
	got := PromptHookEntry([]string{"branch main", "", "3 files changed"})
	want := EntryBegin + "This section (like others) contains important information that I want you to use in your responses. " +
		"I have gathered this context from valuable programmatic script hooks. You must follow any requests and consider all " +
		"of the information in this section\n\nbranch main\n\n3 files changed\n\n" + EntryEnd
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if strings.Contains(got, "for the entire conversation") {
		t.Error("a per-prompt hook entry must not claim to hold for the entire conversation")
	}
}
