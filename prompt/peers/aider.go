package peers

import "github.com/strata-agent/strata/llm"

// aider reproduces Aider (Aider-AI/aider). Verified in the source (5dc9490,
// May 2026):
//
//   - aider/coders/base_coder.py Coder.format_chat_chunks assembles, in
//     ChatChunks.all_messages order: the system prompt, the example
//     conversation, the read-only files, the repository map, the done
//     messages (earlier exchanges, or their summary), the chat files, the
//     current messages and the reminder. Each context chunk is a user
//     message followed by a short assistant acknowledgment, re-sent every
//     turn; when no file is in the chat a canned "no files" pair is sent.
//   - aider/coders/chat_chunks.py ChatChunks.add_cache_control_headers
//     marks the last message of the examples (or, without examples, of the
//     system chunk), of the repository map (or, without one, of the
//     read-only files) and of the chat files: at most three breakpoints,
//     {type: ephemeral} with no TTL (5 minutes).
//
// Mapping onto prompt.Context (the wording of the canned messages is
// strata's own; the user/"Ok." pairs):
//
//	system          Context.System (strata has no example conversation)     BP
//	read-only pair  Knowledge, Task, hook outputs, skills
//	repo-map pair   FileTree                                                BP (else on the read-only pair)
//	done            the summary as a user/"Ok." pair, then the history
//	                before the current prompt
//	chat-files pair Files (aider's chat files: re-sent whole every turn)    BP
//	current         the history from the last user message that carries
//	                no tool_result (the prompt) to the end
//
// Aider has no tool loop: its current messages are the prompt and the
// replies to it (reflections), and they stay after the last breakpoint. A
// strata turn's tool round-trips are its current messages, so they are not
// cached until the next prompt: that is what aider's layout costs an agent
// with tools.
func init() { register("aider", aider) }

// The canned user/assistant pairs (strata's wording).
const (
	aiderReadOnly = "Reference material for this conversation (read only; do not edit it):"
	aiderRepoMap  = "Map of the repository's files:"
	aiderSummary  = "Summary of the conversation so far:"
	aiderFiles    = "Files added to the chat, with their current content:"
	aiderNoFiles  = "No files have been added to the chat yet."
	aiderOk       = "Ok."
)

func aider(b *builder) {
	c := b.c
	items := contextItems(c)
	b.tools(c.Tools, false)
	b.system("system", c.System, true)

	var msgs []llm.Message
	pair := func(user string) int {
		msgs = append(msgs, llm.UserText(user), llm.AssistantText(aiderOk))
		return len(msgs) - 1
	}
	readOnly, repo := -1, -1
	if s := sections("", items, itemKnowledge, itemTask, itemHook, itemSkills); s != "" {
		readOnly = pair(aiderReadOnly + "\n\n" + s)
	}
	if c.FileTree != "" {
		repo = pair(aiderRepoMap + "\n\n" + c.FileTree)
	}
	ctxEnd := len(msgs) - 1
	if c.Summary != "" {
		pair(aiderSummary + "\n\n" + c.Summary)
	}
	cur := currentPrompt(c.History)
	msgs = append(msgs, c.History[:cur]...)
	doneEnd := len(msgs) - 1
	files := aiderNoFiles
	if s := sections("", items, itemFile); s != "" {
		files = aiderFiles + "\n\n" + s
	}
	chat := pair(files)
	msgs = append(msgs, c.History[cur:]...)
	b.req.Messages = msgs

	if repo >= 0 {
		b.mark(repo, "")
	} else if readOnly >= 0 {
		b.mark(readOnly, "")
	}
	b.mark(chat, "")

	b.span("read-only context", "mixed", 0, readOnly, "user/Ok. pair")
	b.span("repository map", "mixed", readOnly+1, ctxEnd, "user/Ok. pair")
	b.span("done (earlier turns)", "mixed", ctxEnd+1, doneEnd, "")
	b.span("chat files", "mixed", doneEnd+1, chat, "user/Ok. pair, re-sent every turn")
	b.span("current turn", "mixed", chat+1, len(msgs)-1, "after the last breakpoint")
}

// currentPrompt returns the index of the last user message that carries no
// tool_result: the prompt that started the current turn (0 when every later
// user message answers tool calls).
func currentPrompt(history []llm.Message) int {
	for i := len(history) - 1; i > 0; i-- {
		if history[i].Role != llm.RoleUser {
			continue
		}
		results := false
		for _, bl := range history[i].Content {
			results = results || bl.Type == llm.BlockToolResult
		}
		if !results {
			return i
		}
	}
	return 0
}
