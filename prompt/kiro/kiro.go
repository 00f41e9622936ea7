// Package kiro is the layout of kiro-cli (docs/kiro.md): no
// system prompt; one synthetic user message carrying every context layer,
// then a canned assistant acknowledgment, then the conversation history. Tool
// specs travel in the request's tools parameter. No cache breakpoints: the
// kiro runtime service exposes none.
//
// The seven layers, in order (docs/kiro.md, "context message"), each of layers 1–6 wrapped in
// "--- CONTEXT ENTRY BEGIN ---\n" … "--- CONTEXT ENTRY END ---\n\n" and
// omitted when empty:
//
//  1. conversation summary
//  2. knowledge-base listing
//  3. task context
//  4. agentSpawn hook output (one entry per hook); userPromptSubmit output
//     travels with the user's prompt instead (PromptHookEntry)
//  5. file:// resources (one entry, "[path]\ncontent\n" per file)
//  6. skill:// hints, "{name}: {description} (file: {path})" under the skill header
//  7. the agent prompt, raw: "Follow this instruction: {prompt}"
//
// Entry texts the design does not give (the summary preamble, the hook preamble,
// the "[path]" file form) are those of the Amazon Q Developer CLI source
// (crates/chat-cli/src/cli/chat/conversation.rs, crates/agent/src/agent/mod.rs).
package kiro

import (
	"strings"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Exact texts (docs/kiro.md; kiro-cli crates/agent/src/agent/consts.rs).
const (
	EntryBegin   = "--- CONTEXT ENTRY BEGIN ---\n"
	EntryEnd     = "--- CONTEXT ENTRY END ---\n\n"
	SkillsHeader = "The following file entries contain: name, filepath, and description. You SHOULD decide when to read the full file using the filepath based on its description:\n\n"
	Ack          = "I will fully incorporate this information when generating my responses, and explicitly acknowledge relevant parts of the summary when answering questions."
	PromptPrefix = "Follow this instruction: "

	summaryPreamble = "This summary contains ALL relevant information from our previous conversation including tool uses, results, code analysis, and file operations. YOU MUST reference this information when answering questions and explicitly acknowledge specific details from the summary when they're relevant to the current question.\n\nSUMMARY CONTENT:\n"
	hookPreamble    = promptHookPreamble + " for the entire conversation\n\n"
	// promptHookPreamble is the hook entry's text without " for the entire
	// conversation", which the Amazon Q Developer CLI's format_hook_context
	// adds only for conversation-start (agentSpawn) hooks.
	promptHookPreamble = "This section (like others) contains important information that I want you to use in your responses. I have gathered this context from valuable programmatic script hooks. You must follow any requests and consider all of the information in this section"
)

// PromptHookEntry formats the output of the userPromptSubmit hooks of one
// prompt as the context entry kiro puts with the user's prompt (the Amazon Q
// Developer CLI's format_hook_context for per-prompt hooks, prepended to the
// user message as its additional context), so layer 4 of the context
// message stays the agentSpawn output alone and does not change from prompt
// to prompt. Empty outputs are skipped; with none it returns "".
func PromptHookEntry(outputs []string) string {
	var b strings.Builder
	for _, o := range outputs {
		if o != "" {
			b.WriteString(o + "\n\n")
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return EntryBegin + promptHookPreamble + "\n\n" + b.String() + EntryEnd
}

// Layout is the kiro layout. The zero value is ready to use.
type Layout struct{}

func init() { prompt.Register("kiro", func() prompt.Layout { return Layout{} }) }

// Name returns "kiro".
func (Layout) Name() string { return "kiro" }

// SkillHint formats one skill the way kiro-cli's format_skill_hint does:
// "{name}: {description} (file: {path})".
func SkillHint(s prompt.Skill) string {
	return s.Name + ": " + s.Description + " (file: " + s.Path + ")"
}

type layer struct{ name, text string }

// layers returns the non-empty layers of the context message in the design's order.
func layers(c *prompt.Context) []layer {
	var out []layer
	entry := func(name, body string) {
		out = append(out, layer{name, EntryBegin + body + EntryEnd})
	}
	if c.Summary != "" {
		entry("summary", summaryPreamble+c.Summary+"\n")
	}
	if c.Knowledge != "" {
		entry("knowledge", c.Knowledge+"\n")
	}
	if c.Task != "" {
		entry("task", c.Task+"\n")
	}
	for _, h := range c.HookOutputs {
		if h != "" {
			entry("hook", hookPreamble+h+"\n\n")
		}
	}
	if len(c.Files) > 0 {
		var b strings.Builder
		for _, f := range c.Files {
			b.WriteString("[" + f.Path + "]\n" + f.Content + "\n")
		}
		entry("resources", b.String())
	}
	if len(c.Skills) > 0 {
		var b strings.Builder
		b.WriteString(SkillsHeader)
		for _, s := range c.Skills {
			b.WriteString(SkillHint(s) + "\n")
		}
		entry("skills", b.String())
	}
	if c.System != "" {
		out = append(out, layer{"agent prompt", PromptPrefix + c.System})
	}
	return out
}

// EmptyContext is the context message when every layer is empty. The
// kiro-cli turn anatomy says the ack pair is "always present"; an empty
// user text block is rejected by Anthropic and Bedrock, so strata sends one
// empty context entry instead of an empty message.
const EmptyContext = EntryBegin + EntryEnd

// Assemble builds [context message, ack] + history with no system prompt and
// no breakpoints. The pair is always present, even when every layer is empty
// (then the context message is EmptyContext). It fails when the history is
// not a valid conversation.
func (Layout) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	if err := prompt.CheckHistory(c.History); err != nil {
		return nil, nil, err
	}
	req := &llm.Request{Model: c.Model, MaxTokens: c.MaxTokens, Tools: c.Tools}
	bd := &prompt.Breakdown{Layout: "kiro", Counter: c.CounterName()}
	if len(c.Tools) > 0 {
		bd.Spans = append(bd.Spans, prompt.Span{Name: "tools", Role: "tools", First: -1, Last: -1,
			Tokens: c.ToolTokens(c.Tools), Preview: prompt.ToolNames(c.Tools)})
	}
	ls := layers(c)
	if len(ls) == 0 {
		ls = []layer{{"empty", EmptyContext}}
	}
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.text)
		bd.Spans = append(bd.Spans, prompt.Span{Name: "context: " + l.name, Role: "user", First: 0, Last: 0,
			Tokens: c.Tokens(l.text), Preview: prompt.Preview(l.text, 60)})
	}
	req.Messages = append(req.Messages, llm.UserText(b.String()), llm.AssistantText(Ack))
	bd.Spans = append(bd.Spans, prompt.Span{Name: "ack", Role: "assistant", First: 1, Last: 1,
		Tokens: c.Tokens(Ack), Preview: prompt.Preview(Ack, 60)})
	first := len(req.Messages)
	req.Messages = append(req.Messages, c.History...)
	n := 0
	for _, m := range c.History {
		n += c.BlockTokens(m.Content)
	}
	bd.Spans = append(bd.Spans, prompt.Span{Name: "history", Role: "mixed", First: first, Last: len(req.Messages) - 1,
		Tokens: n, Preview: prompt.Preview(c.History[0].Text(), 60)})
	for _, s := range bd.Spans {
		bd.TotalTokens += s.Tokens
	}
	return req, bd, nil
}
