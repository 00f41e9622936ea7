// Package bedrock is strata's provider for Amazon Bedrock's Converse API, on
// the official AWS SDK (github.com/aws/aws-sdk-go-v2/service/bedrockruntime):
// ConverseStream (or Converse) with the SDK's event-stream decoder; usage
// maps cacheReadInputTokens / cacheWriteInputTokens to CacheRead /
// CacheWrite. No SDK type appears in its API: credentials are static keys
// or a profile name (Config), and the AWS credential chain is built inside.
//
// # Request mapping
//
// Stream maps an llm.Request once (section names are the Bedrock API
// reference, "Converse"):
//
//   - System blocks → system text blocks; messages → user / assistant
//     messages with text, image (bytes; png, jpeg, gif, webp), toolUse,
//     toolResult (text and image content, status "success" or "error"),
//     reasoningContent (reasoningText with signature; redactedContent).
//   - Tools → toolConfig.tools (toolSpec with the JSON schema); ToolChoice →
//     toolConfig.toolChoice auto / any / tool {name}. Converse has no "none":
//     ToolChoiceNone withholds the tools (no toolConfig), which Bedrock
//     accepts only while no message holds tool_use / tool_result blocks
//     (ValidationException "The toolConfig field must be defined when using
//     toolUse and toolResult content blocks"); with such blocks it is an
//     error. Converse has no parallel-call switch: DisableParallel with tools
//     is an error.
//   - MaxTokens, Temperature, TopP, Stop → inferenceConfig maxTokens,
//     temperature, topP, stopSequences (maxTokens is 32-bit: larger values
//     are an error).
//   - Reasoning → additionalModelRequestFields in the form Claude models
//     read there (other models answer ValidationException): BudgetTokens →
//     thinking {type: enabled, budget_tokens} (1024 ≤ budget < MaxTokens
//     when MaxTokens is set); Effort → output_config {effort} (low, medium,
//     high, xhigh, max); Summary is ignored (Claude returns its summarized
//     thinking whenever thinking is on).
//   - Breakpoints → a cachePoint block right after the block each one closes
//     (Bedrock docs, "Prompt caching": cachePoint marks the end of a cached
//     prefix in tools, system or messages; TTL "1h" → ttl 1h).
//   - User and PromptCacheKey have no Converse field and are ignored (they
//     do not change the answer).
//
// A request that fails llm.Request.Validate or that the rules above reject
// is an error naming the message, block or field, returned before anything
// is sent.
//
// # Responses
//
// Content kept from responses: text, reasoning text (+signature), redacted
// reasoning and toolUse blocks, in order. Citations and server-side tool
// results (e.g. a code-interpreter toolResult in an assistant message) have
// no place in strata's neutral model and are dropped.
package bedrock
