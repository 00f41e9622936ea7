package replay

import (
	"encoding/json"

	"github.com/strata-agent/strata/llm"
)

// geminiBody writes r as a Gemini streamGenerateContent?alt=sse body: one
// GenerateContentResponse per data: line (no event: lines), following the
// Gemini API reference "Generating content" (models.streamGenerateContent,
// GenerateContentResponse, UsageMetadata) and the recording
// pydantic-ai/cassettes/test_google/test_google_streaming_tool_call_thought_signature.yaml:
//
//	per block: {candidates: [{content: {parts: [part], role: model}, index: 0}],
//	            usageMetadata, modelVersion, responseId}
//	last:      {candidates: [{content: {parts: [{text: ""}], role: model},
//	            finishReason, index: 0}], usageMetadata, modelVersion, responseId}
//
// A part is {text} (text), {text, thought: true} (thinking) or
// {functionCall: {name, args, id (when the block has one)}}, with
// thoughtSignature when the block has a Signature. usageMetadata (the
// final counts, on every chunk as the API repeats them) is
// {promptTokenCount: Input + CacheRead, candidatesTokenCount: Output −
// Reasoning, totalTokenCount, cachedContentTokenCount and
// thoughtsTokenCount when > 0}: promptTokenCount includes the cached tokens
// (Gemini docs, "Context caching") and thoughts are counted apart from the
// candidates.
func geminiBody(w *writer, r Reply, finish string, u llm.Usage) {
	usage := obj{"promptTokenCount": u.Input + u.CacheRead, "candidatesTokenCount": u.Output - u.Reasoning,
		"totalTokenCount": u.Total}
	if u.CacheRead > 0 {
		usage["cachedContentTokenCount"] = u.CacheRead
	}
	if u.Reasoning > 0 {
		usage["thoughtsTokenCount"] = u.Reasoning
	}
	chunk := func(part obj, finish string) {
		cand := obj{"content": obj{"parts": []any{part}, "role": "model"}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		w.sse("", obj{"candidates": []any{cand}, "usageMetadata": usage, "modelVersion": r.Model, "responseId": r.ID})
	}
	for _, b := range r.Blocks {
		var part obj
		switch b.Type {
		case llm.BlockText:
			part = obj{"text": b.Text}
		case llm.BlockThinking:
			part = obj{"text": b.Text, "thought": true}
		case llm.BlockToolUse:
			call := obj{"name": b.Name, "args": json.RawMessage(input(b))}
			if b.ID != "" {
				call["id"] = b.ID
			}
			part = obj{"functionCall": call}
		}
		if b.Signature != "" {
			part["thoughtSignature"] = b.Signature
		}
		chunk(part, "")
	}
	chunk(obj{"text": ""}, finish)
}
