// Package compact keeps a long conversation inside the context window the
// way Context Pilot does (docs/panels.md, "detach"): the
// oldest messages are cut at a turn boundary into a frozen chunk that is
// sent as conversation-history context instead of as messages, while a
// minimum of recent messages stays live.
//
// Chunks are frozen: once detached, a chunk's text never changes, and later
// chunks are appended after it, so the context that carries them stays a
// stable prefix for the provider's prompt cache. Nothing is summarized or
// dropped: the model still sees every message, as text.
package compact

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/token"
)

// Policy holds Context Pilot's four thresholds (docs/panels.md, rule 3); a
// chunk is detached only when all four are met. Token counts come from
// Counter (nil = the fast estimator, an estimate as Context Pilot's is).
type Policy struct {
	ChunkMinMessages int // DETACH_CHUNK_MIN_MESSAGES: messages in a detached chunk, at least
	ChunkMinTokens   int // DETACH_CHUNK_MIN_TOKENS: tokens in a detached chunk, at least
	KeepMinMessages  int // DETACH_KEEP_MIN_MESSAGES: live messages left, at least
	KeepMinTokens    int // DETACH_KEEP_MIN_TOKENS: live tokens left, at least
	Counter          token.Counter
	// Summarize, when set, writes the tl;dr of each text block of at
	// least TLDRMinTokens tokens in a detached chunk, and the chunk shows
	// the tl;dr instead of the full text (Context Pilot's summarized
	// messages; docs/panels.md, "tl;dr"). nil keeps every text in full.
	Summarize Summarizer
}

// Default is Context Pilot's policy: chunks of ≥ 25 messages and ≥ 5,000 tokens,
// keeping ≥ 25 messages and ≥ 7,500 tokens live.
var Default = Policy{ChunkMinMessages: 25, ChunkMinTokens: 5000, KeepMinMessages: 25, KeepMinTokens: 7500}

// Chunk is one detached part of a conversation.
type Chunk struct {
	First, Last int    // indices of its first and last message in the whole history
	Tokens      int    // its token count (Policy.Counter)
	Text        string // the messages as text, frozen
	// Usage is what the tl;dr requests written for this chunk used
	// (NextContext with Policy.Summarize; zero otherwise). The loop adds it
	// to its usage: these are model calls too.
	Usage llm.Usage
}

func (p Policy) count(m llm.Message) int {
	c := p.Counter
	if c == nil {
		c = token.Estimator{}
	}
	return token.CountBlocks(c, m.Content)
}

// boundary reports whether a live conversation may start at msgs[i]: a
// user message that is a new prompt (no tool_result), after a complete
// assistant turn.
func boundary(msgs []llm.Message, i int) bool {
	if i == 0 || i >= len(msgs) || msgs[i].Role != llm.RoleUser || msgs[i-1].Role != llm.RoleAssistant {
		return false
	}
	for _, b := range msgs[i].Content {
		if b.Type == llm.BlockToolResult {
			return false
		}
	}
	return len(msgs[i-1].ToolUses()) == 0
}

// Next finds the next chunk to detach from live, the messages not yet
// detached (offset is the index of live[0] in the whole history): the
// shortest prefix of live that ends at a turn boundary and meets the chunk
// minimums while what remains meets the keep minimums. ok is false when no
// such boundary exists (for example inside one long tool loop, which has no
// boundary until the next user prompt).
func (p Policy) Next(live []llm.Message, offset int) (c Chunk, ok bool) {
	if len(live) < p.ChunkMinMessages+p.KeepMinMessages {
		return Chunk{}, false
	}
	tokens := make([]int, len(live)+1) // prefix sums
	for i, m := range live {
		tokens[i+1] = tokens[i] + p.count(m)
	}
	total := tokens[len(live)]
	for b := max(p.ChunkMinMessages, 1); len(live)-b >= p.KeepMinMessages; b++ {
		if tokens[b] < p.ChunkMinTokens || !boundary(live, b) {
			continue
		}
		if total-tokens[b] < p.KeepMinTokens {
			return Chunk{}, false // a longer chunk leaves even less
		}
		return Chunk{First: offset, Last: offset + b - 1, Tokens: tokens[b], Text: Render(live[:b], offset)}, true
	}
	return Chunk{}, false
}

// NextContext is Next with Summarize applied: the chunk's text shows the
// tl;dr of its long text blocks. err is the first tl;dr that failed (its
// message keeps its full text); the chunk is usable either way.
func (p Policy) NextContext(ctx context.Context, live []llm.Message, offset int) (c Chunk, ok bool, err error) {
	c, ok = p.Next(live, offset)
	if !ok || p.Summarize == nil {
		return c, ok, nil
	}
	msgs, used, err := p.summarize(ctx, live[:c.Last-offset+1])
	c.Text, c.Usage = Render(msgs, offset), used
	return c, true, err
}

// Render writes messages as the frozen text of a chunk: a header naming
// the message range, then one entry per content block — "[user]",
// "[assistant]" (or "[user, tl;dr]" / "[assistant, tl;dr]" for a text
// NextContext summarized), "[assistant thinking]", "[tool_use NAME id=ID] {input}",
// "[tool_result id=ID]" (or "[tool_result id=ID error]") with the result
// text, "[image MEDIA-TYPE]".
func Render(msgs []llm.Message, offset int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Conversation history, messages %d–%d (detached from the live conversation; frozen):", offset+1, offset+len(msgs))
	renderBlocks(&b, msgs)
	return b.String()
}

// renderBlocks writes the entries of Render for msgs, each after "\n\n".
func renderBlocks(b *strings.Builder, msgs []llm.Message) {
	for _, m := range msgs {
		for _, blk := range m.Content {
			b.WriteString("\n\n")
			switch blk.Type {
			case llm.BlockText:
				if blk.Signature == tldrMark {
					fmt.Fprintf(b, "[%s, tl;dr] %s", m.Role, blk.Text)
					continue
				}
				fmt.Fprintf(b, "[%s] %s", m.Role, blk.Text)
			case llm.BlockThinking:
				fmt.Fprintf(b, "[%s thinking] %s", m.Role, blk.Text)
			case llm.BlockToolUse:
				in, _ := json.Marshal(json.RawMessage(blk.Input))
				fmt.Fprintf(b, "[tool_use %s id=%s] %s", blk.Name, blk.ID, in)
			case llm.BlockToolResult:
				status := ""
				if blk.IsError {
					status = " error"
				}
				fmt.Fprintf(b, "[tool_result id=%s%s]", blk.ID, status)
				for _, c := range blk.Content {
					if c.Type == llm.BlockText {
						b.WriteString("\n" + c.Text)
					} else {
						fmt.Fprintf(b, "\n[%s %s]", c.Type, c.MediaType)
					}
				}
			case llm.BlockImage:
				fmt.Fprintf(b, "[%s image %s]", m.Role, blk.MediaType)
			case llm.BlockRedactedThinking:
				fmt.Fprintf(b, "[%s redacted thinking]", m.Role)
			}
		}
	}
}
