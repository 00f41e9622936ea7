package replay

import "github.com/strata-agent/strata/llm"

// anthropicBody writes r as an Anthropic Messages SSE stream, following the
// Anthropic docs "Streaming Messages" (sections "Event types", "Content
// block delta types" and "Streaming request with tool use") and the
// recording anthropic-sdk-python/tests/lib/streaming/fixtures/tool_use_response.txt:
//
//	message_start   message{id, model, content: [], stop_reason: null, usage{input_tokens,
//	                cache_creation_input_tokens, cache_read_input_tokens, output_tokens: ≤1,
//	                cache_creation{ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}}}
//	per block i:
//	  content_block_start  {index: i, content_block: {type: text, text: ""} |
//	                       {type: thinking, thinking: "", signature: ""} |
//	                       {type: tool_use, id, name, input: {}}}
//	  ping                 (once, after the first content_block_start, as the API sends it)
//	  content_block_delta  text_delta | thinking_delta (+ signature_delta) | input_json_delta
//	                       (the whole input as one partial_json)
//	  content_block_stop
//	message_delta   {delta: {stop_reason, stop_sequence: null}, usage: {output_tokens}}
//	message_stop
func anthropicBody(w *writer, r Reply, stop string, u llm.Usage) {
	w.sse("message_start", obj{"type": "message_start", "message": obj{
		"id": r.ID, "type": "message", "role": "assistant", "model": r.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheWrite,
			"cache_read_input_tokens": u.CacheRead, "output_tokens": min(u.Output, 1),
			"cache_creation": obj{"ephemeral_5m_input_tokens": u.CacheWrite - u.CacheWrite1h,
				"ephemeral_1h_input_tokens": u.CacheWrite1h}}}})
	if len(r.Blocks) == 0 {
		w.sse("ping", obj{"type": "ping"})
	}
	for i, b := range r.Blocks {
		delta := func(d obj) {
			w.sse("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": d})
		}
		var start obj
		switch b.Type {
		case llm.BlockText:
			start = obj{"type": "text", "text": ""}
		case llm.BlockThinking:
			start = obj{"type": "thinking", "thinking": "", "signature": ""}
		case llm.BlockToolUse:
			start = obj{"type": "tool_use", "id": b.ID, "name": b.Name, "input": obj{}}
		}
		w.sse("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": start})
		if i == 0 {
			w.sse("ping", obj{"type": "ping"})
		}
		switch b.Type {
		case llm.BlockText:
			delta(obj{"type": "text_delta", "text": b.Text})
		case llm.BlockThinking:
			delta(obj{"type": "thinking_delta", "thinking": b.Text})
			if b.Signature != "" {
				delta(obj{"type": "signature_delta", "signature": b.Signature})
			}
		case llm.BlockToolUse:
			delta(obj{"type": "input_json_delta", "partial_json": input(b)})
		}
		w.sse("content_block_stop", obj{"type": "content_block_stop", "index": i})
	}
	w.sse("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil},
		"usage": obj{"output_tokens": u.Output}})
	w.sse("message_stop", obj{"type": "message_stop"})
}
