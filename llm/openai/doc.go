// Package openai implements llm.Provider on the official OpenAI Go SDK
// (github.com/openai/openai-go/v3) for two wire APIs:
//
//   - Chat Completions (NewChat): OpenAI itself and every OpenAI-compatible
//     server (DeepSeek, xAI, Groq, Mistral, OpenRouter, Qwen, Moonshot,
//     Perplexity, Azure, Ollama, vLLM, …), POST {BaseURL}/chat/completions.
//   - Responses (NewResponses): OpenAI's Responses API and compatible servers
//     (Azure, xAI, DeepSeek, OpenRouter, LM Studio / open-responses),
//     POST {BaseURL}/responses.
//
// Everything on the wire goes through the SDK: requests are built as SDK
// param types (the mapping rules are below), streams are decoded by the
// SDK's SSE decoder into SDK event types, and HTTP errors arrive as
// *openai.Error, which is mapped to *llm.APIError. Provider-specific extras
// the SDK has no field for (reasoning_content, Mistral content arrays) are
// read through the SDK's raw JSON field access (respjson.Field.Raw,
// JSON.ExtraFields). No SDK type appears in the package's API.
//
// Both mappings validate the request first (llm.Request.Validate) and
// return an error naming the offending field, before anything is sent, for
// anything the API cannot express. Breakpoints are ignored on both: OpenAI
// caches prompt prefixes automatically (OpenAI docs, "Prompt caching").
//
// # Chat Completions mapping
//
// The request never sets "stream"/"stream_options" itself: Chat.Stream adds
// stream_options.include_usage=true when streaming. Messages, in order:
//
//   - System blocks → one "system" message whose content is the blocks'
//     text joined with blank lines (llm.Request.SystemText). The "developer"
//     role is not used: OpenAI treats system as developer for reasoning
//     models, and compatible servers only know "system".
//   - User message → first one "tool" message per tool_result block, in
//     order (tool_call_id = the tool_use id; content = the result's text,
//     a plain string for one text block, text parts otherwise; is_error has
//     no Chat field and is not sent), then one "user" message with the
//     remaining text and image blocks, plus any images that were inside tool
//     results (tool messages carry text only). User content is a plain
//     string when it is exactly one text block, else an array of text and
//     image_url parts (images as their URL or a data: URL of the base64
//     Data with MediaType).
//   - Assistant message → one "assistant" message: its text blocks
//     concatenated as content (omitted when there is none) and every
//     tool_use block as one entry of tool_calls (id, function name,
//     arguments = the Input JSON text unchanged), so several tool_use
//     blocks become one message with parallel tool calls. Thinking and
//     redacted_thinking blocks are dropped: Chat Completions has no input
//     field for reasoning (reasoning_content is response-only on DeepSeek,
//     Qwen, xAI), and a message left empty is omitted. Images in assistant
//     messages are an error.
//
// Request fields (OpenAI API reference, "Create chat completion"): tools →
// function tools with parameters = InputSchema (an empty schema becomes
// {"type":"object","properties":{}}; "strict" is not sent); with tools,
// ToolChoice auto → "auto", any → "required", none → "none", tool →
// {"type":"function","function":{"name":…}}, and DisableParallel →
// parallel_tool_calls=false (OpenAI rejects both without tools); MaxTokens →
// max_completion_tokens (the legacy max_tokens is rejected by OpenAI
// reasoning models, see the recorded "Unsupported parameter: 'max_tokens'"
// error, and is deprecated); Temperature, TopP, Stop (array form);
// Reasoning.Effort → reasoning_effort (sent as given); PromptCacheKey →
// prompt_cache_key; User → user. Reasoning.BudgetTokens (Chat has no
// thinking budget) and Reasoning.Summary (Chat returns no reasoning
// summaries) are errors.
//
// # Responses mapping
//
// System blocks → instructions (joined with blank lines). Input items, in
// message order:
//
//   - User message → one function_call_output item per tool_result block,
//     in order (call_id = the tool_use id; output = the result text as a
//     string, or an input_text/input_image list when it holds several blocks
//     or an image; is_error has no field and is not sent), then one user
//     message with the remaining text and image blocks (content is a plain
//     string for exactly one text block, else input_text/input_image parts;
//     images by URL or as a base64 data: URL, detail "auto").
//   - Assistant message → one item per block, in order: text with an ItemID
//     → an output message item {id, status "completed", content
//     [output_text]}, text without one → an easy assistant message {role,
//     content}; tool_use → function_call {call_id = ID, id = ItemID when
//     set, name, arguments = Input unchanged}; thinking with an ItemID →
//     reasoning {id = ItemID, encrypted_content = Signature when set,
//     summary = [summary_text Text] or [] when Text is empty}. Thinking
//     without an ItemID (e.g. from another provider) and redacted_thinking
//     cannot be sent and are dropped; images are an error.
//
// Request fields (OpenAI API reference, "Create a model response"): tools →
// function tools (parameters = InputSchema, an empty schema becomes the
// empty object schema; strict=false, since strict mode requires every
// property to be required and additionalProperties false, which strata's
// schemas do not guarantee); with tools, ToolChoice auto/none →
// "auto"/"none", any → "required", tool → {"type":"function","name"}, and
// DisableParallel → parallel_tool_calls=false; MaxTokens →
// max_output_tokens; Temperature; TopP; Reasoning.Effort/Summary →
// reasoning {effort, summary} (sent as given); PromptCacheKey →
// prompt_cache_key; User → safety_identifier (OpenAI's replacement for the
// deprecated "user"). store is always false: strata resends the whole
// conversation and never uses previous_response_id, so nothing needs to be
// kept server-side; the reasoning state instead travels as
// encrypted_content, so include ["reasoning.encrypted_content"] is
// requested whenever reasoning is configured (Effort or Summary set) or a
// reasoning item is sent (OpenAI rejects that include for non-reasoning
// models, so it is not always on). Stop sequences and
// Reasoning.BudgetTokens do not exist in the Responses API and are errors.
package openai
