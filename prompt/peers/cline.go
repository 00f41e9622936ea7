package peers

// cline reproduces the classic Cline extension (cline/cline,
// src/core/api/providers/anthropic.ts, AnthropicHandler.createMessage, with
// src/core/api/transform/anthropic-format.ts sanitizeAnthropicMessages; read
// at the last commit before the files moved under apps/, 2026). Verified in
// the source:
//
//   - for models that support prompt caching the system prompt is one text
//     block with cache_control {type: ephemeral}: BP(system);
//   - the tools are sent unmarked (the source's comment: the system
//     breakpoint already covers them, since tools precede the system);
//   - sanitizeAnthropicMessages marks the last block of the last two user
//     messages (those carry the tool results), skipping thinking blocks.
//
// Mapping: Cline's system prompt holds its rules files and environment, so
// the system instructions and every context item form the one system block.
// Cline also appends environment details (open tabs, time) to each user
// message; strata's Context has no such per-turn item beyond the reminder,
// which every peer appends after the breakpoints.
func init() { register("cline", lastTwoUsers(false)) }

// lastTwoUsers is cline's rule, and goose's with BP(last tool) when
// markTools is set: one marked system block holding the instructions and
// every context item, and BP on the last two user messages.
func lastTwoUsers(markTools bool) func(b *builder) {
	return func(b *builder) {
		b.tools(b.c.Tools, markTools)
		b.system("system", sections(b.c.System, contextItems(b.c), allItems...), true)
		for _, i := range b.lastUsers(2) {
			b.mark(i, "")
		}
		b.history("the last two user messages")
	}
}
