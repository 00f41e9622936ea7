// Package all links every provider client strata ships (Anthropic
// Messages, OpenAI Chat Completions and Responses, Amazon Bedrock
// Converse, Gemini), so llm.NewClient — and a strata workspace opened with
// Options.ProviderName — can build any of them. The strata CLI imports it;
// a Go program that brings its own llm.Provider does not need it, and then
// links no provider SDK:
//
//	import _ "github.com/strata-agent/strata/llm/all"
package all

import (
	_ "github.com/strata-agent/strata/llm/anthropic" // anthropic
	_ "github.com/strata-agent/strata/llm/bedrock"   // bedrock
	_ "github.com/strata-agent/strata/llm/gemini"    // gemini
	_ "github.com/strata-agent/strata/llm/openai"    // openai-chat, openai-responses
)
