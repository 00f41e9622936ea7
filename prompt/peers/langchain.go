package peers

// langchain reproduces LangChain's AnthropicPromptCachingMiddleware
// (langchain-anthropic, langchain_anthropic/middleware/prompt_caching.py).
// Verified in the source: wrap_model_call adds the model setting
// cache_control = {type: ephemeral, ttl: "5m"} (the defaults) to every
// request once the conversation has min_messages_to_cache messages (0 by
// default); taken from the issue, not read here: ChatAnthropic applies that
// setting to the last block of the last message, and nothing else is marked.
//
// Mapping: the middleware adds nothing but the mark, so the request is laid
// out like flat (system instructions and every context item in one
// unmarked system block, tools unmarked) and the breakpoint carries the
// explicit "5m" TTL the middleware sends.
func init() { register("langchain", langchain) }

func langchain(b *builder) {
	b.tools(b.c.Tools, false)
	b.system("system", sections(b.c.System, contextItems(b.c), allItems...), false)
	b.mark(len(b.req.Messages)-1, "5m")
	b.history("the last message only")
}
