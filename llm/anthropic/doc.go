// Package anthropic is strata's provider for the Anthropic Messages API, on the
// official SDK (github.com/anthropics/anthropic-sdk-go). It maps llm.Request
// to the SDK's MessageNewParams, streams with the SDK's SSE decoder and
// accumulator (Message.Accumulate), and maps the final message, stop reason,
// usage and errors back to the llm types. No SDK type appears in its API.
//
// # Request mapping
//
// Stream maps an llm.Request once and exactly (the knobs_test golden in
// package llm shows the resulting body; section names are the Anthropic API
// reference, "Create a Message"):
//
//   - Model → model; MaxTokens → max_tokens (DefaultMaxTokens when 0: the
//     field is required);
//   - System → system as text blocks;
//   - Messages → messages with text, image (base64 or URL), tool_use (input
//     sent byte for byte), tool_result (text and image content, is_error only
//     when true), thinking (+signature) and redacted_thinking blocks;
//   - Tools → tools (name, description, input_schema kept key for key:
//     properties, required, and every other key such as additionalProperties
//     or $defs);
//   - ToolChoice (only with tools) → tool_choice auto / any / tool {name} /
//     none with disable_parallel_tool_use (a zero Mode with DisableParallel
//     sends auto; none carries no flag: no call is made at all);
//   - Temperature, TopP, Stop → temperature, top_p, stop_sequences;
//   - Reasoning.BudgetTokens → thinking {type: enabled, budget_tokens}
//     (1024 ≤ budget < max_tokens, else an error); Reasoning.Effort →
//     output_config.effort (low, medium, high, xhigh or max, else an error;
//     models without effort support answer 400); Reasoning.Summary is
//     ignored: Claude returns its summarized thinking whenever thinking is
//     on and has no summary level to choose;
//   - User → metadata.user_id; PromptCacheKey is ignored (OpenAI only);
//   - Breakpoints → cache_control {type: ephemeral[, ttl]} on the exact block
//     named: the last tool (tools), System[Block] (system) or
//     Messages[Message].Content[Block] (message).
//
// A request that fails llm.Request.Validate or holds a value the API cannot
// take (a breakpoint on a thinking block, an image media type the API does
// not accept, a schema whose type is not "object", the bounds above) is an
// error naming the field, returned before anything is sent.
//
// # Responses
//
// Content kept from responses (the rule the fixture tests assert): text,
// thinking (+signature), redacted_thinking and client tool_use blocks, in
// order. Server-side blocks (server_tool_use, web_search_tool_result,
// web_fetch_tool_result, code execution results, mcp_tool_use/result,
// compaction, fallback, advisor results, …) are run by Anthropic and have no
// place in strata's neutral model: they are dropped, along with their deltas,
// and citations on text blocks are dropped too (the text is kept). A
// tool_use block whose input is not a complete JSON object is dropped when the
// model stopped on max_tokens (the output cap cut the call off: it can be
// neither executed nor replayed); any other unparseable tool input is an error.
package anthropic
