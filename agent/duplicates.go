package agent

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-agent/strata/llm"
)

// dupMarker joins a repeated tool_use id and its occurrence number in the
// id strata gives the repeat ("toolu_1" → "toolu_1_dup2"): letters, digits
// and "_" only, which every provider accepts in an id (Anthropic's
// tool_use id pattern is ^[a-zA-Z0-9_-]+$).
const dupMarker = "_dup"

// dedupeToolUses enforces one tool_use per id in an assistant message, in
// place, and returns the tool_results (text, is_error) for the calls that
// must not run, keyed by their (new) id.
//
// The rule: the first tool_use with an id keeps it and runs; each later one
// with the same id gets the unique id "<id>_dup<n>" (n = 2, 3, … its
// occurrence, bumped past ids already in the message), its ItemID cleared
// (an OpenAI Responses item id names the provider's item, whose call_id was
// the original), and an is_error tool_result saying it was not run. So the
// next request holds unique tool_use ids, each answered by exactly one
// tool_result, which Anthropic (tool_use ids must be unique in a message)
// and OpenAI (each tool_call_id / call_id answered once) both require; the
// model sees both calls and why the second did not run.
//
// The renamed id is the record: a message already deduped (a stored one,
// read back for a resume) gets the same results again, for every tool_use
// whose id is an earlier tool_use's id followed by "_dup<n>". A model that
// itself sends ids "x" and "x_dup2" in one response has the second refused
// the same way.
func dedupeToolUses(msg *llm.Message) map[string]string {
	ids := map[string]bool{}
	for _, b := range msg.Content {
		if b.Type == llm.BlockToolUse {
			ids[b.ID] = true
		}
	}
	seen := map[string]int{}
	var earlier []string
	var out map[string]string
	settle := func(id, orig string) {
		if out == nil {
			out = map[string]string{}
		}
		out[id] = fmt.Sprintf("tool call not executed: duplicate tool_use id %q (an earlier call of this response has it, and tool_use ids must be unique), so this call was given the id %q and was not run; call the tool again if it is still needed", orig, id)
	}
	for i := range msg.Content {
		b := &msg.Content[i]
		if b.Type != llm.BlockToolUse {
			continue
		}
		seen[b.ID]++
		if n := seen[b.ID]; n > 1 {
			orig := b.ID
			for ids[b.ID] {
				b.ID = orig + dupMarker + strconv.Itoa(n)
				n++
			}
			ids[b.ID] = true
			b.ItemID = ""
			settle(b.ID, orig)
		} else if orig, ok := renamedFrom(b.ID, earlier); ok {
			settle(b.ID, orig)
		}
		earlier = append(earlier, b.ID)
	}
	return out
}

// renamedFrom reports whether id is one of earlier followed by "_dup<n>",
// and which.
func renamedFrom(id string, earlier []string) (string, bool) {
	for _, e := range earlier {
		rest, ok := strings.CutPrefix(id, e+dupMarker)
		if n, err := strconv.Atoi(rest); ok && err == nil && n > 1 && rest == strconv.Itoa(n) {
			return e, true
		}
	}
	return "", false
}
