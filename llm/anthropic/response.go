package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/strata-agent/strata/llm"
)

// response maps the SDK's final message (streamed and accumulated, or from
// Messages.New) to an llm.Response, keeping the blocks keptBlock names (see
// the package comment for the rule). Usage: Input = input_tokens, CacheRead =
// cache_read_input_tokens, CacheWrite = cache_creation_input_tokens,
// CacheWrite1h = cache_creation.ephemeral_1h_input_tokens, Output =
// output_tokens, Total recomputed (llm.Usage.WithTotal). It fails only for a
// tool_use input that is not a JSON object while the stop reason is not
// max_tokens. cut[i] marks content[i] as a tool_use whose streamed input was
// not a JSON object (see markCut); nil for a non-streamed message.
func response(m *sdk.Message, cut []bool) (*llm.Response, error) {
	out := &llm.Response{
		Message:            llm.Message{Role: llm.RoleAssistant, Content: make([]llm.Block, 0, len(m.Content))},
		ProviderStopReason: string(m.StopReason),
		StopReason:         stopReason(m.StopReason),
		Model:              string(m.Model),
		ID:                 m.ID,
		Usage: llm.Usage{
			Input:      m.Usage.InputTokens,
			Output:     m.Usage.OutputTokens,
			CacheRead:  m.Usage.CacheReadInputTokens,
			CacheWrite: m.Usage.CacheCreationInputTokens,

			CacheWrite1h: m.Usage.CacheCreation.Ephemeral1hInputTokens,
		}.WithTotal(),
	}
	for i, cb := range m.Content {
		switch cb.Type {
		case "text":
			out.Message.Content = append(out.Message.Content, llm.TextBlock(cb.Text))
		case "thinking":
			out.Message.Content = append(out.Message.Content, llm.Block{Type: llm.BlockThinking, Text: cb.Thinking, Signature: cb.Signature})
		case "redacted_thinking":
			out.Message.Content = append(out.Message.Content, llm.Block{Type: llm.BlockRedactedThinking, Data: []byte(cb.Data)})
		case "tool_use":
			input := json.RawMessage(cb.Input)
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			if !isObject(input) || (i < len(cut) && cut[i]) {
				if m.StopReason == sdk.StopReasonMaxTokens {
					continue // cut off by the output cap: dropped (package comment)
				}
				return nil, fmt.Errorf("anthropic: malformed response: content[%d] tool_use %q input is not a JSON object: %.80s", i, cb.Name, input)
			}
			out.Message.Content = append(out.Message.Content, llm.ToolUseBlock(cb.ID, cb.Name, append(json.RawMessage(nil), input...)))
		}
	}
	return out, nil
}

func isObject(raw json.RawMessage) bool {
	return strings.HasPrefix(strings.TrimSpace(string(raw)), "{") && json.Valid(raw)
}

// stopReason maps Anthropic's stop_reason (end_turn, tool_use, max_tokens,
// stop_sequence, refusal, pause_turn, model_context_window_exceeded) to the
// llm value of the same name. Unknown or empty values map to end_turn; the raw
// value stays in Response.ProviderStopReason.
func stopReason(s sdk.StopReason) llm.StopReason {
	switch r := llm.StopReason(s); r {
	case llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopSequence, llm.StopRefusal, llm.StopPauseTurn, llm.StopContextWindow:
		return r
	}
	return llm.StopEndTurn
}
