package demo

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// Stream authors one Anthropic Messages SSE stream (the event sequence of the
// Anthropic streaming docs) whose assistant message holds blocks — text (one
// text_delta each) and tool_use (input sent as one input_json_delta) — and
// ends with stop. usage.Input, CacheRead and CacheWrite go into message_start,
// usage.Output into message_delta. It is for tests and offline scripts that
// need a model turn no recording has; the provider's decoding is tested on
// real recordings.
func Stream(msgID string, usage llm.Usage, stop llm.StopReason, blocks ...llm.Block) replay.Response {
	var b bytes.Buffer
	ev := func(name string, v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data)
	}
	type m = map[string]any
	ev("message_start", m{"type": "message_start", "message": m{"id": msgID, "type": "message", "role": "assistant",
		"model": Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": m{"input_tokens": usage.Input, "cache_creation_input_tokens": usage.CacheWrite,
			"cache_read_input_tokens": usage.CacheRead, "output_tokens": 1}}})
	for i, bl := range blocks {
		switch bl.Type {
		case llm.BlockToolUse:
			ev("content_block_start", m{"type": "content_block_start", "index": i,
				"content_block": m{"type": "tool_use", "id": bl.ID, "name": bl.Name, "input": m{}}})
			ev("content_block_delta", m{"type": "content_block_delta", "index": i,
				"delta": m{"type": "input_json_delta", "partial_json": string(bl.Input)}})
		default:
			ev("content_block_start", m{"type": "content_block_start", "index": i, "content_block": m{"type": "text", "text": ""}})
			ev("content_block_delta", m{"type": "content_block_delta", "index": i, "delta": m{"type": "text_delta", "text": bl.Text}})
		}
		ev("content_block_stop", m{"type": "content_block_stop", "index": i})
	}
	ev("message_delta", m{"type": "message_delta", "delta": m{"stop_reason": stop, "stop_sequence": nil},
		"usage": m{"output_tokens": usage.Output}})
	ev("message_stop", m{"type": "message_stop"})
	return replay.Response{Body: b.Bytes(), Header: map[string][]string{"Content-Type": {"text/event-stream"}}, Source: "demo.Stream " + msgID}
}
