package wsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// Restoring a stored session: the whole conversation of its latest loop (a
// loop per prompt, chained: docs/turn.md, rule 2), or a branch of it.

// branchPoint is where a branch starts: turn of loop, or, with loop "", the
// turn numbered turn across the latest conversation.
type branchPoint struct {
	loop string
	turn int
}

// restore loads the stored loop (or branches it) into s; a session without
// a loop starts a new conversation (nothing of it was stored).
func (s *Session) restore(ctx context.Context, cfg agent.Config, id string, branch *branchPoint) error {
	st := s.ws.store
	d, err := st.LoadSession(ctx, id)
	if err != nil {
		return sessionLookupError(id, err)
	}
	s.id = d.ID
	s.keep.Carry(d.PingTotals())
	// Read the history only once no other writer can add to it.
	if err := s.hold(ctx); err != nil {
		return err
	}
	loop, err := st.LatestLoop(ctx, d.ID)
	switch {
	case errors.Is(err, session.ErrNotFound) && branch == nil:
		// Never prompted, or its first prompt stopped before its first turn
		// (a before_turn abort): nothing to restore, the conversation starts
		// here, in this session.
		s.agent, err = agent.New(cfg)
		return err
	case errors.Is(err, session.ErrNotFound):
		return &ConfigError{Err: fmt.Errorf("branch session %s: it has no stored turn to branch from (it was never prompted, or its first prompt stopped before its first model call); resume it instead: %w", d.ID, err)}
	case err != nil:
		return fmt.Errorf("session %s: find its latest loop: %w", d.ID, err)
	}
	if branch != nil {
		at, index, err := branchAt(ctx, st, d.ID, loop, *branch)
		if err != nil {
			return err
		}
		nl := agent.NewID()
		if err := st.Branch(ctx, d.ID, at, index, nl); err != nil {
			return &ConfigError{Err: fmt.Errorf("branch session %s at turn %d of loop %s: %w (see 'strata sessions show %s')", d.ID, index, at, err, d.ID)}
		}
		loop = nl
	}
	var next int
	var held int64
	if s.agent, next, held, err = restoreLoop(ctx, st, cfg, loop); err != nil {
		return err
	}
	s.keep.CarryContext(held)
	if branch != nil {
		return nil
	}
	if s.pending, err = st.Pending(ctx, loop); err != nil {
		return err
	}
	s.pendingTurn = next - 1
	return nil
}

// sessionLookupError is the error for a session id (or id prefix) the
// store did not resolve: an unknown id or an ambiguous prefix is a
// *ConfigError that names it and says where the ids are listed (wrapping
// session.ErrNotFound or session.ErrAmbiguous); other errors, the store's
// own failures, are runtime errors naming the id.
func sessionLookupError(id string, err error) error {
	switch {
	case errors.Is(err, session.ErrNotFound):
		return &ConfigError{Err: fmt.Errorf("session %q: %w in the session database (see 'strata sessions list')", id, session.ErrNotFound)}
	case errors.Is(err, session.ErrAmbiguous):
		return &ConfigError{Err: fmt.Errorf("session %q: %w: give more of the id (see 'strata sessions list')", id, session.ErrAmbiguous)}
	}
	return fmt.Errorf("session %q: %w", id, err)
}

// branchAt resolves b to a loop and a turn index in it: a turn numbered
// across the conversation of the session's latest loop, or a turn of a
// named loop (which must belong to the session; Branch checks the turn).
func branchAt(ctx context.Context, st session.Store, sid, latest string, b branchPoint) (string, int, error) {
	if b.loop != "" {
		return b.loop, b.turn, nil
	}
	rec, err := st.ReadLoop(ctx, latest)
	if err != nil {
		return "", 0, err
	}
	turns := rec.Numbered()
	if b.turn >= len(turns) {
		return "", 0, &ConfigError{Err: fmt.Errorf("branch session %s: turn %d %w: its conversation has turns 0–%d (see 'strata sessions show %s')",
			sid, b.turn, session.ErrNotFound, len(turns)-1, sid)}
	}
	return turns[b.turn].LoopID, turns[b.turn].Index, nil
}

// restoreLoop returns an agent with cfg continuing the stored loop (the
// conversation's history, the loops it continues included, with the layout
// state of the loop's checkpoint, or replayed through the layout when none
// fits: agent.RestoreState; the conversation's id and token usage so far), the index of the loop's next turn and the tokens the conversation
// held after its last stored model call (that turn's prompt tokens plus its output; 0 when
// no stored turn reports usage). A loop that has run no turn yet and is a
// branch gets its first turn triggered by event.TriggerBranch.
func restoreLoop(ctx context.Context, st session.Store, cfg agent.Config, loop string) (a *agent.Agent, next int, held int64, err error) {
	rec, err := st.ReadLoop(ctx, loop)
	if err != nil {
		return nil, 0, 0, err
	}
	next, err = st.NextTurnIndex(ctx, loop)
	if err != nil {
		return nil, 0, 0, err
	}
	cfg.ConversationID = rec.ConversationID()
	a, err = agent.RestoreState(cfg, loop, rec.History(), next, checkpoint(ctx, st, loop))
	if err != nil {
		return nil, 0, 0, err
	}
	var used llm.Usage
	for _, l := range append(rec.Before, *rec) {
		for _, t := range l.Turns {
			used = used.Add(t.Usage)
			if n := t.Usage.PromptTokens(); n > 0 {
				held = n + t.Usage.Output
			}
		}
	}
	a.RestoreUsage(used)
	if next == 0 && rec.Trigger == event.TriggerBranch {
		a.SetFirstTrigger(event.TriggerBranch)
	}
	return a, next, held, nil
}

// checkpoint returns the stored checkpoint of loop (session.Checkpoints),
// or nil when the store keeps none or it cannot be read: the restore then
// replays the layout over the stored history, which is slower and loses
// nothing.
func checkpoint(ctx context.Context, st session.Store, loop string) *agent.State {
	cs, ok := st.(session.Checkpoints)
	if !ok {
		return nil
	}
	data, err := cs.Checkpoint(ctx, loop)
	if err != nil {
		return nil
	}
	var saved agent.State
	if err := json.Unmarshal(data, &saved); err != nil {
		slog.Warn("session checkpoint unreadable; replaying the layout instead", "loop", loop, "err", err)
		return nil
	}
	return &saved
}

// saveCheckpoint stores the loop's checkpoint after a prompt
// (session.Checkpoints), so the next restore loads it in O(n). A failure
// only costs that restore a replay: it is logged, not returned.
func (s *Session) saveCheckpoint(ctx context.Context) {
	cs, ok := s.ws.store.(session.Checkpoints)
	if !ok || s.agent == nil {
		return
	}
	data, err := json.Marshal(s.agent.Checkpoint())
	if err == nil {
		err = cs.SaveCheckpoint(context.WithoutCancel(ctx), s.agent.LoopID(), data)
	}
	if err != nil && !errors.Is(err, session.ErrNotFound) { // not found: the prompt stopped before its first turn
		slog.Warn("session checkpoint not saved; the next restore replays the layout", "loop", s.agent.LoopID(), "err", err)
	}
}
