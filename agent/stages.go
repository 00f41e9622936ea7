package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/token"
)

// Stage outcomes carried by StagePostFired events (event.Event.Outcome).
const (
	OutcomeOK        = "ok"        // the stage body completed
	OutcomeDenied    = "denied"    // a guard hook refused (ErrDenied)
	OutcomeCancelled = "cancelled" // the caller's context was cancelled
	OutcomeFailed    = "failed"    // any other error (provider, layout, hook)
)

// outcome classifies the error a stage body ended with.
func outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, ErrDenied):
		return OutcomeDenied
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OutcomeCancelled
	}
	return OutcomeFailed
}

// enter opens stage st of the running prompt (closing the open one, if
// any) with its StagePreFired event; leave closes the open stage with the
// outcome of err (docs/loop.md, rule 12). At most one stage is open; id is
// the turn its events carry (nil outside a turn: receive_input, render).
// The stage boundaries of the message-loop design are these calls.
func (e *Engine) enter(s *State, st Stage, id *event.TurnID) {
	e.leave(s, nil)
	r := s.Run
	r.Stage, r.StageTurn = st, id
	if id != nil {
		r.StageTurn = ptr(*id)
	}
	e.emit(event.Event{Kind: event.StagePreFired, CorrelationID: r.CorrelationID, Turn: r.StageTurn, Stage: string(st)})
}

func (e *Engine) leave(s *State, err error) {
	r := s.Run
	if r.Stage == "" {
		return
	}
	e.emit(event.Event{Kind: event.StagePostFired, CorrelationID: r.CorrelationID, Turn: r.StageTurn, Stage: string(r.Stage), Outcome: outcome(err)})
	r.Stage, r.StageTurn = "", nil
}

// windowPolicy is the compaction used when a composed request would exceed
// the model's context window and Config.Compaction did not make it fit:
// detach the oldest messages up to the next user-prompt boundary, keeping
// at least the last prompt live. Unlike Context Pilot's chunks, whose text
// is still sent, a window chunk's text is only a notice that the messages
// were removed: the request must shrink.
var windowPolicy = compact.Policy{ChunkMinMessages: 1, KeepMinMessages: 1}

// assembleWithinWindow assembles the request from pc and, when
// Config.ContextWindow is known and the request's estimated size (system,
// messages and tools, plus the output cap) exceeds it, compacts the oldest
// prompts of the live history (windowPolicy: a frozen chunk; one Compaction
// event each) and assembles again, until it fits or no user-prompt boundary
// is left (the request is then sent as is and the provider decides). The
// message-loop design, COMPOSE_REQUEST: "Run compaction if the composed size
// would exceed the model's context window." Without a summariser the chunk
// only says which messages were removed; when Config.Compaction has one
// (compact.Policy.Summarize, --compact-tldr) the chunk keeps the messages
// with a tl;dr of each long text, as Context Pilot's detached chunks do
// (docs/loop.md, rule 3), and its requests count in the turn's usage. A nil
// id (warming a restored layout) emits nothing, so a restored loop detaches
// the same chunks.
func (e *Engine) assembleWithinWindow(ctx context.Context, s *State, corr string, id *event.TurnID, pc *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	for {
		req, bd, err := e.cfg.Layout.Assemble(pc)
		if err != nil {
			return nil, nil, fmt.Errorf("compose request (layout %s): %w", e.cfg.Layout.Name(), err)
		}
		e.cfg.Params.Apply(req)
		size := requestTokens(e.cfg.Counter, req)
		if e.cfg.ContextWindow <= 0 || size <= e.cfg.ContextWindow {
			return req, bd, nil
		}
		pol := windowPolicy
		if e.cfg.Compaction != nil {
			pol.Summarize = e.cfg.Compaction.Summarize
		}
		c, ok, err := pol.NextContext(ctx, s.History[s.Detached:], s.Detached)
		if !ok {
			if id != nil {
				e.emit(event.Event{Kind: event.Progress, CorrelationID: corr, Turn: id,
					Text: fmt.Sprintf("request of ~%d tokens exceeds the context window of %d tokens and no older prompt is left to compact; sending it as is", size, e.cfg.ContextWindow)})
			}
			return req, bd, nil
		}
		if err != nil && id != nil {
			e.emit(event.Event{Kind: event.Progress, CorrelationID: corr, Turn: id,
				Text: fmt.Sprintf("conversation history chunk %d keeps a full message: %v", len(s.Chunks)+1, err)})
		}
		why := "removed from the request"
		if pol.Summarize != nil {
			why = "summarised"
			c.Text = fmt.Sprintf("Conversation history, messages %d–%d (%d tokens), summarised to fit the model's context window of %d tokens:\n\n%s",
				c.First+1, c.Last+1, c.Tokens, e.cfg.ContextWindow, c.Text)
			s.TLDR = s.TLDR.Add(c.Usage)
		} else {
			c.Text = fmt.Sprintf("Conversation history, messages %d–%d (%d tokens): removed to fit the model's context window of %d tokens.",
				c.First+1, c.Last+1, c.Tokens, e.cfg.ContextWindow)
		}
		e.detach(s, corr, id, c, fmt.Sprintf(", %s because it (~%d tokens with the output cap) exceeded the context window of %d tokens", why, size, e.cfg.ContextWindow))
		pc.History = s.History[s.Detached:]
		if pc.Summary != "" {
			pc.Summary += "\n\n"
		}
		pc.Summary += c.Text
	}
}

// requestTokens estimates the input tokens of req plus its output cap,
// with c (nil = token.Estimator).
func requestTokens(c token.Counter, req *llm.Request) int {
	if c == nil {
		c = token.Estimator{}
	}
	n := token.CountBlocks(c, req.System) + token.CountTools(c, req.Tools) + int(req.MaxTokens)
	for _, m := range req.Messages {
		n += token.CountBlocks(c, m.Content)
	}
	return n
}
