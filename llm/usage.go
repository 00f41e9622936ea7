package llm

import (
	"bytes"
	"encoding/json"
)

// Usage is the token accounting of one model call (or a sum of calls), in
// tokens. The fields partition the prompt so that cost is a plain dot product:
//
//		cost = Input·price_in + CacheRead·price_read + CacheWrite·price_write + Output·price_out
//
//	  - Input: prompt tokens billed at the base input price (neither read from
//	    nor written to the cache). Anthropic input_tokens; OpenAI
//	    prompt_tokens − cached_tokens (Chat) or input_tokens − cached_tokens
//	    (Responses).
//	  - CacheRead: prompt tokens served from the prompt cache. Anthropic
//	    cache_read_input_tokens; OpenAI prompt_tokens_details.cached_tokens /
//	    input_tokens_details.cached_tokens.
//	  - CacheWrite: prompt tokens written to the cache. Anthropic
//	    cache_creation_input_tokens; OpenAI reports none.
//	  - CacheWrite1h: the part of CacheWrite written with the 1-hour TTL
//	    (priced higher), where the provider splits writes by TTL: Anthropic
//	    cache_creation.ephemeral_1h_input_tokens. 0 from providers that do
//	    not split (Bedrock, OpenAI, Gemini): see llm.API for which do.
//	  - Output: generated tokens, reasoning included (as both providers bill).
//	  - Reasoning: the part of Output spent on reasoning/thinking, where the
//	    provider reports it (OpenAI completion_tokens_details.reasoning_tokens /
//	    output_tokens_details.reasoning_tokens).
//	  - Total: Input + CacheRead + CacheWrite + Output.
//
// The JSON names are the Rust agent-loop Turn's usage fields (docs/turn.md,
// rule 4: "input, output, reasoning, cache_read, cache_write,
// total_tokens"), every one always present; cache_write_1h is strata's
// addition, present when non-zero. UnmarshalJSON also reads the "total" of
// event streams written before (strata run --format json).
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	// CacheWrite1h is part of CacheWrite, not added to Total again.
	CacheWrite1h int64 `json:"cache_write_1h,omitempty"`
	Total        int64 `json:"total_tokens"`
}

// UnmarshalJSON reads a Usage, taking a legacy "total" when
// "total_tokens" is absent.
func (u *Usage) UnmarshalJSON(b []byte) error {
	type plain Usage
	var v struct {
		plain
		Legacy *int64 `json:"total"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*u = Usage(v.plain)
	if v.Legacy != nil && !bytes.Contains(b, []byte(`"total_tokens"`)) {
		u.Total = *v.Legacy
	}
	return nil
}

// PromptTokens returns all prompt tokens of the call: Input + CacheRead +
// CacheWrite.
func (u Usage) PromptTokens() int64 { return u.Input + u.CacheRead + u.CacheWrite }

// Add returns the field-wise sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      u.Input + v.Input,
		Output:     u.Output + v.Output,
		Reasoning:  u.Reasoning + v.Reasoning,
		CacheRead:  u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite,
		Total:      u.Total + v.Total,

		CacheWrite1h: u.CacheWrite1h + v.CacheWrite1h,
	}
}

// WithTotal returns u with Total recomputed from the parts.
func (u Usage) WithTotal() Usage {
	u.Total = u.Input + u.CacheRead + u.CacheWrite + u.Output
	return u
}

// StopReason says why the model stopped generating (Anthropic names; the
// provider packages map OpenAI finish reasons onto them).
type StopReason string

// Stop reasons.
const (
	StopEndTurn       StopReason = "end_turn"      // natural end (OpenAI "stop", Responses "completed")
	StopToolUse       StopReason = "tool_use"      // the model called tools (OpenAI "tool_calls")
	StopMaxTokens     StopReason = "max_tokens"    // output cap hit (OpenAI "length", incomplete max_output_tokens)
	StopSequence      StopReason = "stop_sequence" // a custom stop sequence matched
	StopRefusal       StopReason = "refusal"       // the model refused (OpenAI "content_filter")
	StopPauseTurn     StopReason = "pause_turn"    // Anthropic paused a long server-tool turn; send it back to continue
	StopContextWindow StopReason = "model_context_window_exceeded"
)

// Response is the outcome of one model call: the final assistant message, why
// it stopped, usage, and the provider's identifiers.
type Response struct {
	Message    Message    `json:"message"`
	StopReason StopReason `json:"stop_reason"`
	// ProviderStopReason is the raw stop/finish reason or status as the
	// provider sent it ("end_turn", "tool_calls", "completed", …).
	ProviderStopReason string `json:"provider_stop_reason,omitempty"`
	Usage              Usage  `json:"usage"`
	Model              string `json:"model,omitempty"`
	ID                 string `json:"id,omitempty"` // provider response id (msg_…, chatcmpl-…, resp_…)
}
