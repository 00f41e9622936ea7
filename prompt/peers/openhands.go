package peers

import "github.com/strata-agent/strata/llm"

// openhands reproduces the OpenHands software-agent-sdk. Verified in the
// source (openhands-sdk/openhands/sdk, August 2026):
//
//   - llm/llm.py LLM._apply_prompt_caching: the system message's first
//     block (the static prompt) is marked; when a second block (the dynamic
//     context) follows it stays unmarked, so the static prompt is shared
//     across conversations; a lone system block is marked. Then the last
//     user or tool message gets a mark on its last block.
//   - agent/agent.py Agent.init_state builds that system message:
//     static_system_message, then get_dynamic_context (repository
//     information and skills, runtime information, secrets, conversation
//     instructions) as the second block.
//   - conversation/impl/local_conversation.py: prompt_cache_key defaults to
//     the conversation id, sent by llm/options/common.py to OpenAI.
//   - The tools carry no cache marks. No TTL: 5 minutes.
//
// Mapping: the static block is Context.System; every context item goes into
// the dynamic block. OpenHands' tool messages are strata's user messages
// carrying tool_results, so the mark goes on the last user message.
// prompt_cache_key is Context.ConversationID, set on every request; only the
// OpenAI providers send it.
func init() { register("openhands", openhands) }

func openhands(b *builder) {
	b.tools(b.c.Tools, false)
	dynamic := sections("", contextItems(b.c), allItems...)
	if b.c.System != "" {
		b.system("system (static)", b.c.System, true)
		b.system("system (dynamic context)", dynamic, false)
	} else {
		b.system("system (dynamic context)", dynamic, true) // a lone block is marked
	}
	for i := len(b.req.Messages) - 1; i >= 0; i-- {
		if b.req.Messages[i].Role == llm.RoleUser {
			b.mark(i, "")
			break
		}
	}
	b.req.PromptCacheKey = b.c.ConversationID
	b.history("the last user/tool message")
}
