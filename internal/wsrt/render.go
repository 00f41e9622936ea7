package wsrt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/token"
)

// RenderOptions mirrors strata.RenderOptions field for field (a type conversion turns one into
// the other); strata.RenderOptions documents the fields.
type RenderOptions struct {
	Session string
	Prompt  string
	Now     time.Time
	Counter token.Counter
}

// RenderLoopID is the loop id Render gives a new conversation (RenderOptions
// without Session), whose real id does not exist until Session.Prompt makes
// one at random: a fixed id keeps two renders byte-identical. Layouts that
// send the conversation id as OpenAI's prompt_cache_key (prompt.Context
// ConversationID; the opencode, openhands and codex peers) show it in place
// of the id the run will send; a render of a stored session shows that
// session's loop id.
const RenderLoopID = "render-new-conversation"

// Rendered mirrors strata.Rendered field for field (a type conversion turns one into
// the other); strata.Rendered documents the fields.
type Rendered struct {
	Request   *llm.Request
	Breakdown *prompt.Breakdown
	API       llm.API
	Method    string
	URL       string
	Body      []byte
}

// Render implements strata.Workspace.Render (documented there).
func (w *Workspace) Render(ctx context.Context, o RenderOptions) (*Rendered, error) {
	prov, captured, err := w.prov.Capturing()
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	cfg, err := w.loopConfig(prov, w.env(w.dir), nil, agent.ModeAll, nil, nil)
	if err != nil {
		return nil, err
	}
	if o.Counter != nil {
		cfg.Context.Counter = o.Counter
	}
	if cfg.Compaction != nil && cfg.Compaction.Summarize != nil { // a tl;dr would be a request: render sends none (a session's stored ones show: restoreForRender)
		p := *cfg.Compaction
		p.Summarize = nil
		cfg.Compaction = &p
	}
	if !o.Now.IsZero() {
		cfg.Now = func() time.Time { return o.Now }
	}
	out := &Rendered{}
	cfg.Hooks = append(cfg.Hooks, agent.Hook{Name: "render", Stage: agent.StageComposeRequest, Phase: agent.PhasePost, Kind: agent.HookObserver,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			out.Request, out.Breakdown = p.Request, p.Breakdown
			return agent.Verdict{}, nil
		}})
	cfg.BeforeTurn = func(context.Context, agent.TurnInfo) error {
		if out.Request != nil {
			return errCaptured // one request only
		}
		return nil
	}
	var a *agent.Agent
	if o.Session == "" {
		a, err = agent.Restore(cfg, RenderLoopID, nil, 0)
	} else {
		a, err = w.restoreForRender(ctx, cfg, o.Session)
	}
	if err != nil {
		return nil, err
	}
	_, err = a.Prompt(ctx, o.Prompt)
	req, ok := captured()
	if !ok || out.Request == nil {
		if err == nil {
			err = errors.New("the SDK sent no request")
		}
		return nil, fmt.Errorf("render: %w", err)
	}
	out.Breakdown.Breakpoints = len(out.Request.Breakpoints)
	out.API, out.Method, out.URL, out.Body = prov.API(), req.Method, req.URL, req.Body
	return out, nil
}

// restoreForRender restores the latest loop of the stored session id (read
// only: nothing is written), its chunks showing the session's stored
// tl;drs under CompactTLDR; a session with no stored loop renders as a new
// conversation, as it resumes.
func (w *Workspace) restoreForRender(ctx context.Context, cfg agent.Config, id string) (*agent.Agent, error) {
	st := w.store
	d, err := st.LoadSession(ctx, id)
	if err != nil {
		return nil, sessionLookupError(id, err)
	}
	if w.opts.CompactTLDR && cfg.Compaction != nil {
		texts, err := st.TLDRs(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		p := *cfg.Compaction
		p.Summarize = session.StoredTLDRsOnly(texts)
		cfg.Compaction = &p
	}
	loop, err := st.LatestLoop(ctx, d.ID)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return agent.Restore(cfg, RenderLoopID, nil, 0)
	case err != nil:
		return nil, fmt.Errorf("session %s: find its latest loop: %w", d.ID, err)
	}
	a, _, _, err := restoreLoop(ctx, st, cfg, loop)
	return a, err
}
