// Package flat is the naive layout and strata's baseline: the system prompt,
// the tool specs and the whole history in order, with no cache breakpoints.
// Every other layout is measured against it.
package flat

import (
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Layout is the flat layout. The zero value is ready to use.
type Layout struct{}

func init() { prompt.Register("flat", func() prompt.Layout { return Layout{} }) }

// Name returns "flat".
func (Layout) Name() string { return "flat" }

// Assemble returns system + tools + history unchanged. It fails when the
// history is not a valid conversation (see prompt.CheckHistory).
func (Layout) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	if err := prompt.CheckHistory(c.History); err != nil {
		return nil, nil, err
	}
	req := &llm.Request{
		Model:     c.Model,
		MaxTokens: c.MaxTokens,
		Tools:     c.Tools,
		Messages:  c.History,
	}
	bd := &prompt.Breakdown{Layout: "flat", Counter: c.CounterName()}
	if len(c.Tools) > 0 {
		bd.Spans = append(bd.Spans, prompt.Span{Name: "tools", Role: "tools", First: -1, Last: -1,
			Tokens: c.ToolTokens(c.Tools), Preview: prompt.ToolNames(c.Tools)})
	}
	if c.System != "" {
		req.System = []llm.Block{llm.TextBlock(c.System)}
		bd.Spans = append(bd.Spans, prompt.Span{Name: "system", Role: "system", First: -1, Last: -1,
			Tokens: c.Tokens(c.System), Preview: prompt.Preview(c.System, 60)})
	}
	n := 0
	for _, m := range c.History {
		n += c.BlockTokens(m.Content)
	}
	bd.Spans = append(bd.Spans, prompt.Span{Name: "history", Role: "mixed", First: 0, Last: len(c.History) - 1,
		Tokens: n, Preview: prompt.Preview(c.History[0].Text(), 60)})
	for _, s := range bd.Spans {
		bd.TotalTokens += s.Tokens
	}
	return req, bd, nil
}
