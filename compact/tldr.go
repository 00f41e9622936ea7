package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/token"
)

// Context Pilot's tl;dr constants (src/constants prompts: TLDR_PROMPT,
// TLDR_MIN_TOKENS). The design sends a summarized message as its tl;dr
// instead of its full content (docs/panels.md, "tl;dr").
const (
	TLDRPrompt = "Summarize the following message in 1-2 short sentences (max 50 words). Be concise and capture the key point:\n\n"
	// TLDRMinTokens: a text shorter than this is its own tl;dr (no model
	// call).
	TLDRMinTokens = 25
	// TLDRMaxTokens is the output cap of a tl;dr request, in tokens.
	TLDRMaxTokens = 200
)

// Summarizer writes the tl;dr of one message text and returns the tokens
// the request used (counted in the loop's usage: Chunk.Usage). It may be
// called from the loop's goroutine only; an error leaves the message's full
// text (the usage still counts: a request that answered nothing useful was
// paid for).
type Summarizer func(ctx context.Context, text string) (string, llm.Usage, error)

// ErrEmptyTLDR: the model answered a tl;dr request with no text.
var ErrEmptyTLDR = errors.New("compact: the model wrote an empty tl;dr")

// ProviderSummarizer returns a Summarizer that asks p (the loop's own
// provider and model) for each tl;dr: one user message, TLDRPrompt then
// the text, capped at TLDRMaxTokens output tokens; the answer's text,
// trimmed, is the tl;dr, and the response's usage is returned with it.
func ProviderSummarizer(p llm.Provider, model string) Summarizer {
	return func(ctx context.Context, text string) (string, llm.Usage, error) {
		req := &llm.Request{Model: model, MaxTokens: TLDRMaxTokens, Messages: []llm.Message{llm.UserText(TLDRPrompt + text)}}
		resp, err := p.Stream(ctx, req, nil)
		if err != nil {
			return "", llm.Usage{}, fmt.Errorf("compact: tl;dr request to %s: %w", p.Name(), err)
		}
		out := strings.TrimSpace(resp.Message.Text())
		if out == "" {
			return "", resp.Usage, ErrEmptyTLDR
		}
		return out, resp.Usage, nil
	}
}

// summarize returns msgs with every text block of at least TLDRMinTokens
// tokens replaced by its tl;dr, marked so the chunk text shows it
// (renderTLDR), and the summed usage of the tl;dr requests. Failed
// summaries keep the full text; the first error is returned with the
// messages.
func (p Policy) summarize(ctx context.Context, msgs []llm.Message) ([]llm.Message, llm.Usage, error) {
	c := p.Counter
	if c == nil {
		c = token.Estimator{}
	}
	var first error
	var used llm.Usage
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		out[i] = llm.Message{Role: m.Role, Content: make([]llm.Block, len(m.Content))}
		for j, b := range m.Content {
			out[i].Content[j] = b
			if b.Type != llm.BlockText || c.Count(b.Text) < TLDRMinTokens {
				continue
			}
			s, u, err := p.Summarize(ctx, b.Text)
			used = used.Add(u)
			if err != nil {
				if first == nil {
					first = fmt.Errorf("message %d: %w", i+1, err)
				}
				continue
			}
			out[i].Content[j] = llm.Block{Type: llm.BlockText, Text: s, Signature: tldrMark}
		}
	}
	return out, used, first
}

// tldrMark tags a text block that holds a tl;dr (never sent: chunk
// blocks only become text).
const tldrMark = "strata:tl;dr"
