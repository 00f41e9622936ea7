// Package cachesim simulates the providers' prompt caches on a session of
// requests, prices the result per model, and computes the oracle: the
// theoretical lower bound of a session's cost, independent of any layout.
//
// # Input
//
// A simulator sees a Request: the prompt as a flat list of Blocks in prompt
// order (tools → system → messages, Anthropic docs "Prompt caching": "prefix
// order tools, system, messages"), each with a position-independent content
// Key (a hash of its exact bytes), a token count and, where the layout put one,
// the cache breakpoint that closes it. FromRequest builds it from an
// llm.Request. Prefix matching is done on block boundaries: two prompts share
// a prefix of k blocks when their first k keys are equal. Tokens inside a block
// that only partly matches are never counted as cached (a conservative
// simplification: the simulators never over-report hits).
//
// # Simulators
//
//   - Anthropic (NewAnthropic) and Bedrock Converse cachePoint for Claude
//     (NewBedrock): explicit breakpoints only, ≤ 4 per request, writes only at
//     breakpoints, a 20-block lookback for reads, per-model minimum cacheable
//     prefix, 5-minute or 1-hour TTL refreshed on every read.
//   - OpenAI (NewOpenAI), Gemini implicit (NewGemini), DeepSeek
//     (NewDeepSeek): automatic prefix caching with a minimum prompt length, a
//     granularity for the cached count, an idle TTL and no write cost.
//
// Simulators are stateful across the requests of one session and are not safe
// for concurrent use; use one per session (or call Reset between sessions).
//
// # Prices
//
// prices.json (embedded) holds, per model, USD per million tokens for input,
// output, cache read, cache write (5 min and 1 h), the minimum cacheable
// prefix, the cache granularity and TTL, each entry with the page it was taken
// from and the date. Lookup finds a model by id or alias; Cost prices a Result.
//
// # Oracle
//
// Oracle (DESIGN.md, "Oracle"): for each request, every token of a block whose
// exact bytes were already sent earlier in the same session within the TTL is
// charged at the read price; every other input token at the write price if a
// later request reuses it within the TTL, else at the base price; output at
// the output price. Where a model also offers a longer TTL at a higher write
// price (Anthropic 1 h), the oracle picks per block the cheaper schedule, so it
// stays a lower bound for layouts that use 1 h breakpoints too.
package cachesim
