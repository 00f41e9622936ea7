package peers

// crush reproduces Charm's crush (charmbracelet/crush, internal/agent/agent.go
// with the charmbracelet/fantasy Anthropic provider). Verified in the source
// (crush 37f36e9, fantasy f6d4d1e, August 2026):
//
//   - sessionAgent.Run sets the cache options on the last agent tool:
//     BP(last tool).
//   - Its PrepareStep callback clears every message's provider options, then
//     walks the messages: on the first non-system message it marks the last
//     system message seen before it (index 0 when there is none, so with no
//     system prompt the first chat message is marked), and it marks every
//     message whose index is among the last two, whatever its role.
//   - getCacheControlOptions is {type: ephemeral} with no TTL: 5 minutes.
//   - fantasy's toPrompt (providers/anthropic/anthropic.go) turns a message's
//     options into cache_control on the message's last part, and sends the
//     system messages before the first chat message as system blocks.
//
// Mapping: crush's system prompt template embeds the project's context files
// and environment, so the system instructions and every context item go
// into the one system block. crush also prepends a provider-configured
// system prompt prefix after the marks are placed (unmarked); strata has no
// such prefix, so none is sent.
func init() { register("crush", crush) }

func crush(b *builder) {
	b.tools(b.c.Tools, true)
	if !b.system("system", sections(b.c.System, contextItems(b.c), allItems...), true) {
		b.mark(0, "") // crush marks index 0 when there is no system message
	}
	n := len(b.req.Messages)
	for i := max(0, n-2); i < n; i++ {
		b.mark(i, "")
	}
	b.history("the last two messages, any role")
}
