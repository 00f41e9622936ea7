package peers

import (
	"slices"
	"strings"

	"github.com/strata-agent/strata/llm"
)

// opencode reproduces sst/opencode. Verified in the source
// (packages/opencode/src, August 2026):
//
//   - provider/transform.ts applyCaching: the first two system messages and
//     the last two non-system messages get the cache options ({type:
//     ephemeral}, no TTL: 5 minutes); for Anthropic they are message-level
//     options, which the AI SDK puts on the message's last block.
//   - session/llm/request.ts prepare: the tools are sorted by name
//     (localeCompare) and carry no cache options; prepareSystem joins the
//     agent (or provider) prompt, the environment and the instruction files
//     (AGENTS.md and the like) into one system message, so only one system
//     breakpoint is placed unless a plugin splits it.
//   - provider/transform.ts options: for the OpenAI provider (or with
//     setCacheKey) promptCacheKey = the session id.
//
// Mapping: the system instructions and every context item form the one
// system message. prompt_cache_key is Context.ConversationID; it is set on
// every request, and only the OpenAI providers send it (the others have no
// such field), which is opencode's rule on the wire. Deviation: tools are
// sorted by byte order, which equals localeCompare for the usual lower-case
// ASCII tool names but can differ on mixed case or punctuation.
func init() { register("opencode", opencode) }

func opencode(b *builder) {
	tools := slices.Clone(b.c.Tools)
	slices.SortStableFunc(tools, func(x, y llm.ToolSpec) int { return strings.Compare(x.Name, y.Name) })
	b.tools(tools, false)
	b.system("system", sections(b.c.System, contextItems(b.c), allItems...), true)
	n := len(b.req.Messages)
	for i := max(0, n-2); i < n; i++ {
		b.mark(i, "")
	}
	b.req.PromptCacheKey = b.c.ConversationID
	b.history("the last two non-system messages")
}
