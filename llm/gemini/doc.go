// Package gemini is strata's provider for the Gemini API (generateContent and
// streamGenerateContent), on the official SDK (google.golang.org/genai). No
// SDK type appears in its API.
//
// # Request mapping
//
// Stream maps an llm.Request once (section names are the Gemini API
// reference, "Generating content" and "Function calling"):
//
//   - System blocks → systemInstruction; user / assistant messages →
//     contents with role user / model.
//   - text → text parts; thinking → thought parts; a block's Signature
//     (base64) → the part's thoughtSignature, replayed unchanged (Gemini docs,
//     "Thought signatures": function calls of Gemini 3 must carry theirs);
//     image → inlineData (bytes) or fileData (URL).
//   - tool_use → functionCall (name, args); tool_result → functionResponse
//     with the call's name and {"output": text} or {"error": text}, images as
//     inlineData parts after it.
//   - Tools → one tool with functionDeclarations (parametersJsonSchema);
//     ToolChoice (only with tools) → toolConfig.functionCallingConfig mode
//     AUTO / ANY / NONE (a named tool is ANY with allowedFunctionNames).
//     Gemini has no switch for parallel function calls: DisableParallel with
//     tools is an error (except with none, where no call is made).
//   - MaxTokens, Temperature, TopP, Stop → generationConfig maxOutputTokens
//     (32-bit: larger values are an error), temperature, topP,
//     stopSequences.
//   - Reasoning → generationConfig.thinkingConfig: BudgetTokens →
//     thinkingBudget; Effort → thinkingLevel (minimal, low, medium, high;
//     other values are an error); both set is an error (Gemini answers 400
//     for a budget together with a level); includeThoughts=true whenever
//     any Reasoning field is set, Summary included, so thought summaries
//     come back as thinking.
//   - Breakpoints are not sent: Gemini caches implicitly (Gemini docs,
//     "Context caching"). User and PromptCacheKey have no Gemini field and
//     are ignored (they do not change the answer). redacted_thinking
//     (Anthropic-only opaque data) has no Gemini form and is an error naming
//     the block.
//
// A request that fails llm.Request.Validate or that the rules above reject
// is an error naming the field, returned before anything is sent.
//
// # Responses
//
// Content kept from responses: text, thought summaries (thought: true) as
// thinking, function calls as tool_use and inline images, in order, with each
// part's thoughtSignature kept (base64) in the block's Signature so it is
// replayed unchanged. Server-side parts (executableCode, codeExecutionResult)
// and grounding/citation metadata have no place in strata's neutral model and
// are dropped. Function calls without an id get one made up
// ("gemini-call-<response id>-<n>"), which is never sent back to Gemini.
package gemini
