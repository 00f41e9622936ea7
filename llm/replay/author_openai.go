package replay

import (
	"fmt"

	"github.com/strata-agent/strata/llm"
)

// chatBody writes r as a Chat Completions stream, following the OpenAI API
// reference "The chat completion chunk object" and "Create chat
// completion" (stream_options.include_usage: one last chunk with empty
// choices and the usage, then data: [DONE]), and the recording
// pydantic-ai/cassettes/test_openai/test_run_stream_sync_streams_real_model.yaml
// (a tool call, then text). Thinking is
// the reasoning_content delta field of DeepSeek's API docs ("Reasoning
// Model"), which the compatible servers share. No event: lines.
//
//	data: {id, object: chat.completion.chunk, created: 0, model, choices: [{index: 0,
//	       delta: {role: assistant, content: "", refusal: null}, finish_reason: null}],
//	       usage: null}
//	per block: delta {content} | {reasoning_content} |
//	           {tool_calls: [{index: k, id, type: function, function: {name, arguments: ""}}]}
//	           then {tool_calls: [{index: k, function: {arguments}}]}
//	           (a first tool_use carries the role delta, with content null)
//	data: {… delta: {}, finish_reason}
//	data: {… choices: [], usage: {prompt_tokens, completion_tokens, total_tokens,
//	       prompt_tokens_details{cached_tokens}, completion_tokens_details{reasoning_tokens}}}
//	data: [DONE]
func chatBody(w *writer, r Reply, finish string, u llm.Usage) {
	chunk := func(choices []any, usage any) {
		w.sse("", obj{"id": r.ID, "object": "chat.completion.chunk", "created": 0, "model": r.Model,
			"choices": choices, "usage": usage})
	}
	delta := func(d obj, finish any) {
		chunk([]any{obj{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}, nil)
	}
	role := obj{"role": "assistant", "content": "", "refusal": nil}
	if len(r.Blocks) > 0 && r.Blocks[0].Type == llm.BlockToolUse {
		role["content"] = nil // sent with the first call, as OpenAI does
	} else {
		delta(role, nil)
		role = obj{}
	}
	calls := 0
	for _, b := range r.Blocks {
		switch b.Type {
		case llm.BlockText:
			delta(obj{"content": b.Text}, nil)
		case llm.BlockThinking:
			delta(obj{"reasoning_content": b.Text}, nil)
		case llm.BlockToolUse:
			role["tool_calls"] = []any{obj{"index": calls, "id": b.ID, "type": "function",
				"function": obj{"name": b.Name, "arguments": ""}}}
			delta(role, nil)
			role = obj{}
			delta(obj{"tool_calls": []any{obj{"index": calls, "function": obj{"arguments": input(b)}}}}, nil)
			calls++
		}
	}
	delta(obj{}, finish)
	chunk([]any{}, obj{"prompt_tokens": u.Input + u.CacheRead, "completion_tokens": u.Output, "total_tokens": u.Total,
		"prompt_tokens_details":     obj{"cached_tokens": u.CacheRead},
		"completion_tokens_details": obj{"reasoning_tokens": u.Reasoning}})
	w.buf.WriteString("data: [DONE]\n\n")
}

// responsesBody writes r as a Responses API stream, following the OpenAI
// guide "Streaming API responses" and the API reference "Streaming events",
// and the recordings vercel-ai/openai/responses/openai-reasoning-encrypted-content.1.chunks.txt
// (reasoning, function_call) and openai-phase.1.chunks.txt (message). Every
// event has an event: line and a sequence_number from 0.
//
//	response.created, response.in_progress   response{id, status: in_progress, model, output: []}
//	per block i (output_index i):
//	  response.output_item.added              item (status in_progress, empty content/summary/arguments)
//	  text:      response.content_part.added, response.output_text.delta,
//	             response.output_text.done, response.content_part.done
//	  thinking:  response.reasoning_summary_part.added, response.reasoning_summary_text.delta,
//	             response.reasoning_summary_text.done, response.reasoning_summary_part.done
//	             (none for an empty text)
//	  tool_use:  response.function_call_arguments.delta, response.function_call_arguments.done
//	  response.output_item.done               the finished item
//	response.completed | response.incomplete  response{status, output, usage{input_tokens,
//	                                          input_tokens_details{cached_tokens}, output_tokens,
//	                                          output_tokens_details{reasoning_tokens}, total_tokens},
//	                                          incomplete_details{reason}}
//
// reason is "" for a completed response, else the incomplete reason.
func responsesBody(w *writer, r Reply, reason string, u llm.Usage) {
	seq := 0
	ev := func(typ string, v obj) {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		w.sse(typ, v)
	}
	response := func(status string, output []any, usage, incomplete any) obj {
		return obj{"id": r.ID, "object": "response", "created_at": 0, "status": status, "model": r.Model,
			"output": output, "usage": usage, "error": nil, "incomplete_details": incomplete}
	}
	ev("response.created", obj{"response": response("in_progress", []any{}, nil, nil)})
	ev("response.in_progress", obj{"response": response("in_progress", []any{}, nil, nil)})
	output := []any{}
	for i, b := range r.Blocks {
		status := "completed"
		if reason != "" && i == len(r.Blocks)-1 {
			status = "incomplete"
		}
		// at adds the fields that place an event on item id.
		at := func(id string, o obj) obj {
			o["item_id"], o["output_index"] = id, i
			return o
		}
		var done obj
		switch b.Type {
		case llm.BlockText:
			id := itemID(b, "msg", r.ID, i)
			part := func(text string) obj { return obj{"type": "output_text", "text": text, "annotations": []any{}} }
			ev("response.output_item.added", obj{"output_index": i, "item": obj{"id": id, "type": "message",
				"status": "in_progress", "role": "assistant", "content": []any{}}})
			ev("response.content_part.added", at(id, obj{"content_index": 0, "part": part("")}))
			ev("response.output_text.delta", at(id, obj{"content_index": 0, "delta": b.Text, "logprobs": []any{}}))
			ev("response.output_text.done", at(id, obj{"content_index": 0, "text": b.Text, "logprobs": []any{}}))
			ev("response.content_part.done", at(id, obj{"content_index": 0, "part": part(b.Text)}))
			done = obj{"id": id, "type": "message", "status": status, "role": "assistant", "content": []any{part(b.Text)}}
		case llm.BlockThinking:
			id := itemID(b, "rs", r.ID, i)
			item := func(summary []any) obj {
				it := obj{"id": id, "type": "reasoning", "summary": summary}
				if b.Signature != "" {
					it["encrypted_content"] = b.Signature
				}
				return it
			}
			ev("response.output_item.added", obj{"output_index": i, "item": item([]any{})})
			summary := []any{}
			if b.Text != "" {
				part := func(text string) obj { return obj{"type": "summary_text", "text": text} }
				ev("response.reasoning_summary_part.added", at(id, obj{"summary_index": 0, "part": part("")}))
				ev("response.reasoning_summary_text.delta", at(id, obj{"summary_index": 0, "delta": b.Text}))
				ev("response.reasoning_summary_text.done", at(id, obj{"summary_index": 0, "text": b.Text}))
				ev("response.reasoning_summary_part.done", at(id, obj{"summary_index": 0, "part": part(b.Text)}))
				summary = []any{part(b.Text)}
			}
			done = item(summary)
		case llm.BlockToolUse:
			id, args := itemID(b, "fc", r.ID, i), input(b)
			call := func(status, args string) obj {
				return obj{"id": id, "type": "function_call", "status": status, "arguments": args, "call_id": b.ID, "name": b.Name}
			}
			ev("response.output_item.added", obj{"output_index": i, "item": call("in_progress", "")})
			ev("response.function_call_arguments.delta", at(id, obj{"delta": args}))
			ev("response.function_call_arguments.done", at(id, obj{"arguments": args}))
			done = call(status, args)
		}
		ev("response.output_item.done", obj{"output_index": i, "item": done})
		output = append(output, done)
	}
	usage := obj{"input_tokens": u.Input + u.CacheRead, "input_tokens_details": obj{"cached_tokens": u.CacheRead},
		"output_tokens": u.Output, "output_tokens_details": obj{"reasoning_tokens": u.Reasoning}, "total_tokens": u.Total}
	if reason == "" {
		ev("response.completed", obj{"response": response("completed", output, usage, nil)})
		return
	}
	ev("response.incomplete", obj{"response": response("incomplete", output, usage, obj{"reason": reason})})
}

// itemID returns b's Responses item id, or prefix_<response id>_<index>.
func itemID(b llm.Block, prefix, responseID string, i int) string {
	if b.ItemID != "" {
		return b.ItemID
	}
	return fmt.Sprintf("%s_%s_%d", prefix, responseID, i)
}
