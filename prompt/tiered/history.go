package tiered

import (
	"strconv"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt/stability"
)

// historyTiers returns the tier of each past message (every message before
// the current prompt). The design places each tier's history as native
// user/assistant pairs after the tier's own user/"Ok." pair; strata keeps
// that native alternation with two rules (docs/tiered.md, rule 12):
//
//   - tiers never get more stable further along the conversation, so
//     history stays in order;
//   - a tier's history starts with a user message and ends with an
//     assistant message: when the tracker would start a tier with an
//     assistant message, the user message before it moves to the later,
//     less stable tier with it (a demotion never costs a cache write that a
//     promotion would).
//
// The second rule lets every tier's "Ok." be followed by a user message and
// every tier's history be followed by the next tier's user message.
func historyTiers(past []llm.Message, tiers map[string]stability.Tier) []stability.Tier {
	out := make([]stability.Tier, len(past))
	for i := range past {
		out[i] = tiers["history:"+strconv.Itoa(i)]
		if i > 0 && out[i] < out[i-1] {
			out[i] = out[i-1]
		}
	}
	for i := len(past) - 1; i > 0; i-- {
		if out[i] != out[i-1] && past[i].Role == llm.RoleAssistant {
			out[i-1] = out[i]
		}
	}
	return out
}

// hasToolResult reports whether m carries tool_result blocks: such a
// message must directly follow the assistant message holding their
// tool_use blocks, so no section pair may be placed before it.
func hasToolResult(m llm.Message) bool {
	for _, b := range m.Content {
		if b.Type == llm.BlockToolResult {
			return true
		}
	}
	return false
}

// withReminder appends the reminder to the message's last text block (a
// tool-result-only message gets none), after "\n\n": the design appends
// "\n\n" + the reminder file's content to the user's message text.
func withReminder(m llm.Message, reminder string) llm.Message {
	if reminder == "" {
		return m
	}
	blocks := append([]llm.Block(nil), m.Content...)
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].Type == llm.BlockText {
			blocks[i].Text += "\n\n" + reminder
			return llm.Message{Role: m.Role, Content: blocks}
		}
	}
	return m
}
