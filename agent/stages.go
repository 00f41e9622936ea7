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

// assembleWithinWindow assembles the request from pc and, when
// Config.ContextWindow is known and the request's estimated size (system,
// messages and tools, plus the output cap) exceeds it, compacts the oldest
// prompts of the live history (windowPolicy: a frozen chunk; one Compaction
// event each) and assembles again, until it fits or no user-prompt boundary
// is left (the request is then sent as is and the provider decides). The
// message-loop design, COMPOSE_REQUEST: "Run compaction if the composed size
// would exceed the model's context window." The chunk is
// compact.WindowChunk's: without a summariser it only says which messages
// were removed; when Config.Compaction has one (compact.Policy.Summarize,
// --compact-tldr) it keeps each removed message as its tl;dr (docs/loop.md,
// rule 3), and the tl;dr requests count in the turn's usage. A nil
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
		var sum compact.Summarizer
		if e.cfg.Compaction != nil {
			sum = e.cfg.Compaction.Summarize
		}
		c, ok, err := compact.WindowChunk(ctx, s.History[s.Detached:], s.Detached, e.cfg.ContextWindow, e.cfg.Counter, sum)
		if !ok {
			if id != nil {
				e.emit(event.Event{Kind: event.Progress, CorrelationID: corr, Turn: id,
					Text: fmt.Sprintf("request of ~%d tokens exceeds the context window of %d tokens and no older prompt is left to compact; sending it as is", size, e.cfg.ContextWindow)})
			}
			return req, bd, nil
		}
		if err != nil && id != nil {
			e.emit(event.Event{Kind: event.Progress, CorrelationID: corr, Turn: id,
				Text: fmt.Sprintf("window compaction: a tl;dr failed, messages %d–%d removed: %v", c.First+1, c.Last+1, err)})
		}
		s.TLDR = s.TLDR.Add(c.Usage)
		why := "removed from the request"
		if sum != nil && c.Text != fmt.Sprintf(compact.WindowRemovedText, c.First+1, c.Last+1, c.Tokens, e.cfg.ContextWindow) {
			why = "summarised"
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
