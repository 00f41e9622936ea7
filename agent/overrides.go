package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// Overrides change the configuration of one prompt (Agent.PromptWithOverrides)
// or of a fork (Config.With before Agent.Fork): what a front end, or a
// workflow stage, sets for itself without touching the session's own
// configuration. The zero value changes nothing.
type Overrides struct {
	// System, when non-nil, replaces the system prompt
	// (Config.Context.System).
	System *string
	// Tools, when set, narrows the tools: a tool is offered and authorized
	// only when both Config.AllowedTool and Tools allow it (it can never
	// widen what the configuration allows).
	Tools func(name string) bool
	// Extra are tools offered beside the configuration's (a tool named like
	// one of them replaces it); they pass the same authority stack as any
	// other tool (tool.Traits.PreApproved lets a program's own tool run
	// without asking in allowlist mode). Tools narrows them too.
	Extra []tool.Tool
	// Hooks run after Config.Hooks.
	Hooks []Hook
	// MaxTurns replaces the continuation limit (0 = Config.MaxTurns).
	MaxTurns int
	// Authority, when set, replaces Config.Authority: a state machine's
	// approval of each call in place of the mode gate.
	Authority func(call llm.Block) (by, reason string)
}

// With returns c changed by o. It fails when an Extra tool cannot be
// registered or MaxTurns is negative.
func (c Config) With(o Overrides) (Config, error) {
	if o.MaxTurns < 0 {
		return c, fmt.Errorf("agent: Overrides.MaxTurns is %d; want ≥ 0", o.MaxTurns)
	}
	if o.System != nil {
		c.Context.System = *o.System
	}
	if len(o.Extra) > 0 {
		if c.Tools == nil {
			c.Tools = tool.NewRegistry()
		}
		reg, err := c.Tools.With(o.Extra...)
		if err != nil {
			return c, fmt.Errorf("agent: Overrides.Extra: %w", err)
		}
		c.Tools = reg
		extra := map[string]bool{}
		pre := map[string]bool{}
		for _, t := range o.Extra {
			n := t.Spec().Name
			extra[n], pre[n] = true, tool.TraitsOf(t).PreApproved
		}
		allowed, approved := c.AllowedTool, c.PreApproved
		if allowed != nil {
			c.AllowedTool = func(name string) bool { return extra[name] || allowed(name) }
		}
		c.PreApproved = func(call llm.Block) bool {
			if extra[call.Name] {
				return pre[call.Name]
			}
			return approved != nil && approved(call)
		}
	}
	if o.Tools != nil {
		allowed := c.AllowedTool
		c.AllowedTool = func(name string) bool { return o.Tools(name) && (allowed == nil || allowed(name)) }
	}
	if len(o.Hooks) > 0 {
		c.Hooks = append(slices.Clone(c.Hooks), o.Hooks...)
	}
	if o.MaxTurns > 0 {
		c.MaxTurns = o.MaxTurns
	}
	if o.Authority != nil {
		c.Authority = o.Authority
	}
	return c, nil
}

// PromptWithOverrides is PromptWith with o applied to this prompt only:
// the next prompt runs with the agent's own configuration again. The
// layout, history and usage are the conversation's, as for any prompt. It
// fails like PromptWith, and at once when o is invalid.
func (a *Agent) PromptWithOverrides(ctx context.Context, text string, attachments []llm.Block, o Overrides) (*Result, error) {
	cfg, err := a.eng.cfg.With(o)
	if err != nil {
		return nil, err
	}
	if !a.busy.CompareAndSwap(false, true) {
		return nil, ErrBusy
	}
	defer a.busy.Store(false)
	own := a.eng
	a.eng = &Engine{cfg: cfg, inbox: own.inbox}
	defer func() { a.eng = own }()
	return a.drive(ctx, a.eng.Start(ctx, a.st, text, attachments))
}

// Fork returns a new agent continuing a copy of a's conversation with cfg
// (its own layout instance, event bus and overrides: Config.With), in a new
// loop whose TurnStart names a's loop as the previous one. Nothing the fork
// does reaches a: its history, usage and events are its own, so a front
// end that does not record its bus keeps the fork's transcript out of the
// session (a workflow stage). When cfg's layout is a's layout, it starts
// from a's layout state; otherwise it replays the history. It returns
// ErrBusy while a prompt runs on a, and fails like Restore.
func (a *Agent) Fork(cfg Config) (*Agent, error) {
	if !a.busy.CompareAndSwap(false, true) {
		return nil, ErrBusy
	}
	defer a.busy.Store(false)
	if cfg.NewID == nil {
		cfg.NewID = NewID
	}
	if cfg.ConversationID == "" {
		cfg.ConversationID = a.st.ConversationID
	}
	saved := a.Checkpoint()
	b, err := RestoreState(cfg, cfg.NewID(), a.st.History, 0, &saved)
	if err != nil {
		return nil, err
	}
	b.st.PreviousLoopID, b.st.Usage = a.st.LoopID, a.st.Usage
	b.st.FirstTrigger = event.TriggerBranch
	b.syncUsage()
	return b, nil
}

// Compact detaches every prompt but the last from the live history now
// (the chat's /compact), as frozen conversation-history chunks: with a
// summariser configured (Config.Compaction.Summarize) each long text shows
// its tl;dr, otherwise the chunks keep the messages' text (Context Pilot's
// detached chunks, docs/panels.md rule 3). Each chunk is announced by a
// Compaction event; its tl;dr requests count in the next turn's usage. It
// returns how many messages were detached (0 when only the last prompt is
// live), ErrBusy while a prompt runs.
func (a *Agent) Compact(ctx context.Context) (int, error) {
	if !a.busy.CompareAndSwap(false, true) {
		return 0, ErrBusy
	}
	defer a.busy.Store(false)
	e, s := a.eng, a.st
	p := compact.Policy{ChunkMinMessages: 1, KeepMinMessages: 1, Counter: e.cfg.Counter}
	if e.cfg.Compaction != nil {
		p.Summarize = e.cfg.Compaction.Summarize
	}
	id := event.TurnID{LoopID: s.LoopID, Index: max(s.Turns-1, 0)}
	before := s.Detached
	for {
		c, ok, err := p.NextContext(ctx, s.History[s.Detached:], s.Detached)
		if !ok {
			break
		}
		if err != nil {
			e.emit(event.Event{Kind: event.Progress, Turn: &id, Text: fmt.Sprintf("conversation history chunk %d keeps a full message: %v", len(s.Chunks)+1, err)})
		}
		s.TLDR = s.TLDR.Add(c.Usage)
		e.detach(s, "", &id, c, ", on request (/compact)")
	}
	return s.Detached - before, nil
}
