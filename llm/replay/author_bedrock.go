package replay

import (
	"fmt"

	"github.com/strata-agent/strata/llm"
)

// bedrockBody writes r as a Bedrock ConverseStream body: AWS event-stream
// messages (application/vnd.amazon.eventstream, headers :event-type,
// :content-type application/json, :message-type event), one per event of
// the Bedrock API reference "ConverseStream" / "ConverseStreamOutput", in
// the order of the recording
// pydantic-ai/bedrock-eventstream-extracted/test_bedrock_model_iter_stream.0.eventstream
// (without its random "p" padding field, which the SDK ignores):
//
//	messageStart       {role: assistant}
//	per block i:
//	  contentBlockStart  {contentBlockIndex: i, start: {toolUse: {toolUseId, name}}}  (tool_use only)
//	  contentBlockDelta  {contentBlockIndex: i, delta: {text} | {reasoningContent: {text}} |
//	                     {toolUse: {input}}}; a thinking Signature follows as
//	                     {reasoningContent: {signature}}
//	  contentBlockStop   {contentBlockIndex: i}
//	messageStop        {stopReason}
//	metadata           {usage: {inputTokens, outputTokens, totalTokens, cacheReadInputTokens,
//	                   cacheWriteInputTokens (both when > 0)}, metrics: {latencyMs: 0}}
//
// The usage fields are those of the API reference "TokenUsage"; inputTokens
// excludes the cached tokens (Bedrock user guide, "Prompt caching").
func bedrockBody(w *writer, r Reply, stop string, u llm.Usage) {
	event := func(typ string, payload obj) {
		data := w.marshal(payload)
		if err := bedrockMessage(&w.buf, typ, data); err != nil && w.err == nil {
			w.err = fmt.Errorf("event-stream %s: %w", typ, err)
		}
	}
	event("messageStart", obj{"role": "assistant"})
	for i, b := range r.Blocks {
		delta := func(d obj) { event("contentBlockDelta", obj{"contentBlockIndex": i, "delta": d}) }
		switch b.Type {
		case llm.BlockText:
			delta(obj{"text": b.Text})
		case llm.BlockThinking:
			delta(obj{"reasoningContent": obj{"text": b.Text}})
			if b.Signature != "" {
				delta(obj{"reasoningContent": obj{"signature": b.Signature}})
			}
		case llm.BlockToolUse:
			event("contentBlockStart", obj{"contentBlockIndex": i, "start": obj{"toolUse": obj{"toolUseId": b.ID, "name": b.Name}}})
			delta(obj{"toolUse": obj{"input": input(b)}})
		}
		event("contentBlockStop", obj{"contentBlockIndex": i})
	}
	event("messageStop", obj{"stopReason": stop})
	usage := obj{"inputTokens": u.Input, "outputTokens": u.Output, "totalTokens": u.Total}
	if u.CacheRead > 0 {
		usage["cacheReadInputTokens"] = u.CacheRead
	}
	if u.CacheWrite > 0 {
		usage["cacheWriteInputTokens"] = u.CacheWrite
	}
	event("metadata", obj{"usage": usage, "metrics": obj{"latencyMs": 0}})
}
