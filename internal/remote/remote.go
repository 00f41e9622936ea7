// Package remote drives the prompts of a session that runs elsewhere — a
// durable session workflow on Temporal workers (package durable,
// docs/durable.md) — for the front ends that show it: 'strata run|chat
// --temporal' and 'strata acp --temporal'. A prompt goes out as one call;
// while it runs, the session's events are polled and handed on in order,
// an approval the session waits for is asked of an agent.Approver and
// answered, and lines typed meanwhile may steer it.
package remote

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// Service runs sessions elsewhere; *durable.Client implements it. Errors
// name the session.
type Service interface {
	// Prompt runs one prompt and returns its result when the loop ends.
	Prompt(ctx context.Context, sessionID, text string) (*agent.Result, error)
	// PromptWith is Prompt with attachments (image blocks) after the text.
	PromptWith(ctx context.Context, sessionID, text string, attachments []llm.Block) (*agent.Result, error)
	// Events returns the session's events from index after on.
	Events(ctx context.Context, sessionID string, after int) ([]event.Event, error)
	// History returns the session's conversation, waiting while the
	// session is being prepared (ACP session/load replays it).
	History(ctx context.Context, sessionID string) ([]llm.Message, error)
	// Pending returns the approval the running prompt waits for (nil =
	// none).
	Pending(ctx context.Context, sessionID string) (*agent.ApprovalRequest, error)
	// Approve answers the pending approval of the call with tool_use id id.
	Approve(ctx context.Context, sessionID, id string, d agent.Decision) error
	// SetMode sets the approval mode of the session's next prompts.
	SetMode(ctx context.Context, sessionID string, m agent.Mode) error
	// Steer queues a steering message for the running (or next) prompt.
	Steer(ctx context.Context, sessionID, text string) error
	// End ends the session once no prompt runs; the stored session stays.
	End(ctx context.Context, sessionID string) error
}

// DefaultPollEvery is how often a running prompt's events and pending
// approval are asked for (two queries each time).
const DefaultPollEvery = 150 * time.Millisecond

// Session is one remote session as a front end drives it. Set the fields,
// then call Prompt; it is not safe for concurrent prompts.
type Session struct {
	Service Service
	ID      string
	// Observe gets every event of the session, in order, once.
	Observe func(event.Event)
	// Approver answers the approvals the session waits for; nil rejects
	// them (the reason says no one is there to ask).
	Approver agent.Approver
	// PollEvery is the polling interval (0 = DefaultPollEvery).
	PollEvery time.Duration

	seen     int             // events observed so far (the query's index)
	answered map[string]bool // approvals answered, by tool_use id
}

// Prompt runs text as the session's next prompt and returns its result,
// observing the events as they arrive and answering approvals. Each line
// received from steer while it runs ("/steer " prefix optional; nil = none)
// is sent as a steering message. The events logged before the prompt's
// end are all observed before Prompt returns.
func (s *Session) Prompt(ctx context.Context, text string, steer <-chan string) (*agent.Result, error) {
	return s.PromptWith(ctx, text, nil, steer)
}

// PromptWith is Prompt with attachments (image blocks) placed after the
// text in the user message.
func (s *Session) PromptWith(ctx context.Context, text string, attachments []llm.Block, steer <-chan string) (*agent.Result, error) {
	type outcome struct {
		res *agent.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var res *agent.Result
		var err error
		if len(attachments) > 0 {
			res, err = s.Service.PromptWith(ctx, s.ID, text, attachments)
		} else {
			res, err = s.Service.Prompt(ctx, s.ID, text)
		}
		done <- outcome{res, err}
	}()
	every := s.PollEvery
	if every <= 0 {
		every = DefaultPollEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case o := <-done:
			if err := s.Drain(context.WithoutCancel(ctx)); err != nil && o.err == nil {
				o.err = err
			}
			return o.res, o.err
		case l, ok := <-steer:
			if !ok {
				steer = nil // end of input: the running prompt still finishes
				continue
			}
			if l = strings.TrimSpace(strings.TrimPrefix(l, "/steer ")); l != "" {
				if err := s.Service.Steer(ctx, s.ID, l); err != nil {
					return nil, err
				}
			}
		case <-tick.C:
			if err := s.Drain(ctx); err != nil {
				return nil, err
			}
			if err := s.answerPending(ctx); err != nil {
				return nil, err
			}
		}
	}
}

// Drain observes the events logged since the last call. The service may
// answer a bounded batch at a time (durable: 1000 events): Drain asks again
// until an answer is empty.
func (s *Session) Drain(ctx context.Context) error {
	for {
		evs, err := s.Service.Events(ctx, s.ID, s.seen)
		if err != nil {
			return fmt.Errorf("reading the events of session %s: %w", s.ID, err)
		}
		if len(evs) == 0 {
			return nil
		}
		for _, e := range evs {
			if s.Observe != nil {
				s.Observe(e)
			}
		}
		s.seen += len(evs)
	}
}

// answerPending asks for the session's pending approval and, when one not
// yet answered is there, asks the Approver and sends the answer (an
// Approver error is a rejection, as in-process).
func (s *Session) answerPending(ctx context.Context) error {
	req, err := s.Service.Pending(ctx, s.ID)
	if err != nil {
		return fmt.Errorf("asking session %s for a pending approval: %w", s.ID, err)
	}
	if req == nil || s.answered[approvalID(req)] {
		return nil
	}
	if err := s.Drain(ctx); err != nil { // observe what led to the call first
		return err
	}
	d := agent.RejectOnce
	if s.Approver != nil {
		if d, err = s.Approver.Approve(ctx, *req); err != nil {
			d = agent.RejectOnce
		}
	}
	if s.answered == nil {
		s.answered = map[string]bool{}
	}
	s.answered[approvalID(req)] = true
	if err := s.Service.Approve(ctx, s.ID, approvalID(req), d); err != nil {
		return fmt.Errorf("answering the approval of %s in session %s: %w", req.Call.Name, s.ID, err)
	}
	return nil
}

// approvalID is the id an approval is answered by: the call's tool_use id,
// else the prompt's correlation id.
func approvalID(req *agent.ApprovalRequest) string {
	if req.Call.ID != "" {
		return req.Call.ID
	}
	return req.CorrelationID
}
