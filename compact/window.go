package compact

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/token"
)

// WindowChunk is the compaction of a request that would exceed the model's
// context window (docs/loop.md, "compaction"; the message-loop design,
// COMPOSE_REQUEST: "Run compaction if the composed size would exceed the
// model's context window"): the oldest prompt of live (the messages up to
// the first turn boundary, at least one message left live; offset is the
// index of live[0] in the whole history), as a chunk for the loop to
// detach. ok is false when live has no turn boundary left.
//
// Without summarize the chunk's text says which messages were removed
// (WindowRemovedText): the model no longer sees them. With summarize
// (Policy.Summarize, the loop's tl;dr writer) every message of the chunk
// is kept as its tl;dr — the message rendered as Render renders it, then
// summarized when it has at least TLDRMinTokens tokens — under a header
// saying so (WindowSummaryHeader), and Chunk.Usage is what the tl;dr
// requests used. A tl;dr that fails, or a summary no shorter than the
// messages, falls back to the removed text (the chunk must shrink the
// request) and err reports the failure. counter nil = token.Estimator.
func WindowChunk(ctx context.Context, live []llm.Message, offset, window int, counter token.Counter, summarize Summarizer) (c Chunk, ok bool, err error) {
	p := Policy{ChunkMinMessages: 1, KeepMinMessages: 1, Counter: counter}
	c, ok = p.Next(live, offset)
	if !ok {
		return Chunk{}, false, nil
	}
	removed := fmt.Sprintf(WindowRemovedText, c.First+1, c.Last+1, c.Tokens, window)
	c.Text = removed
	if summarize == nil {
		return c, true, nil
	}
	if counter == nil {
		counter = token.Estimator{}
	}
	var b strings.Builder
	fmt.Fprintf(&b, WindowSummaryHeader, c.First+1, c.Last+1, c.Tokens, window)
	for i, m := range live[:c.Last-offset+1] {
		var one strings.Builder
		renderBlocks(&one, []llm.Message{m})
		text := strings.TrimPrefix(one.String(), "\n\n")
		if counter.Count(text) < TLDRMinTokens {
			b.WriteString("\n\n" + text)
			continue
		}
		s, u, serr := summarize(ctx, text)
		c.Usage = c.Usage.Add(u)
		if serr != nil {
			return c, true, fmt.Errorf("message %d: %w", c.First+i+1, serr)
		}
		fmt.Fprintf(&b, "\n\n[%s, tl;dr] %s", m.Role, s)
	}
	if counter.Count(b.String()) >= c.Tokens {
		return c, true, nil // no shorter: the messages go, as without a summariser
	}
	c.Text = b.String()
	return c, true, nil
}

// The texts of a window chunk (WindowChunk): messages FIRST–LAST (1-based),
// their tokens, the window in tokens.
const (
	// WindowRemovedText replaces messages removed without a summariser.
	WindowRemovedText = "Conversation history, messages %d–%d (%d tokens): removed to fit the model's context window of %d tokens."
	// WindowSummaryHeader heads the tl;dr of each removed message.
	WindowSummaryHeader = "Conversation history, messages %d–%d (%d tokens): summarized to fit the model's context window of %d tokens, one tl;dr per message:"
)
