package strata

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

// RenderOptions say which request Workspace.Render shows.
type RenderOptions struct {
	// Session continues this stored session's latest loop: its history
	// comes before Prompt, as `Session.Prompt` would send it after
	// ResumeSession ("" = a new conversation).
	Session string
	// Prompt is the user message of the request.
	Prompt string
	// Now fixes the request time layouts may print (zero = Options.Now,
	// else the current time).
	Now time.Time
	// Counter counts the Breakdown's tokens (nil = the fast estimate);
	// token.ForModel gives BPE counts (exact for OpenAI models; its Name
	// says where they are an approximation or estimate). It never changes
	// the request.
	Counter token.Counter
}

// renderLoopID is the loop id Render gives a new conversation (RenderOptions
// without Session), whose real id does not exist until Session.Prompt makes
// one at random: a fixed id keeps two renders byte-identical. Layouts that
// send the conversation id as OpenAI's prompt_cache_key (prompt.Context
// ConversationID; the opencode, openhands and codex peers) show it in place
// of the id the run will send; a render of a stored session shows that
// session's loop id.
const renderLoopID = "render-new-conversation"

// Rendered is a request as the provider's SDK would send it.
type Rendered struct {
	Request   *llm.Request      // the provider-neutral request (after the layout and Options.Params)
	Breakdown *prompt.Breakdown // the layout's layers with token counts and breakpoints
	// API is the provider's wire API. The Breakdown's breakpoints are sent
	// only where it takes explicit cache breakpoints (Anthropic
	// cache_control, Bedrock cachePoint); OpenAI and Gemini cache prefixes
	// on their own and get none.
	API    llm.API
	Method string // HTTP method the SDK used
	URL    string // endpoint; Bedrock and Gemini carry the model in it
	Body   []byte // the exact JSON body the SDK sends
}

// Render returns the request the workspace's next prompt would send, without
// sending it: the same loop code as Session.Prompt (hooks the workspace runs
// included) composes it, and the provider's real SDK encodes it into a
// transport that records and never sends. Nothing is recorded in the store.
// It needs a provider chosen by name (not Options.Provider); no API key is
// needed. A new conversation's loop id is renderLoopID.
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
		a, err = agent.Restore(cfg, renderLoopID, nil, 0)
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
		return agent.Restore(cfg, renderLoopID, nil, 0)
	case err != nil:
		return nil, fmt.Errorf("session %s: find its latest loop: %w", d.ID, err)
	}
	a, _, _, err := restoreLoop(ctx, st, cfg, loop)
	return a, err
}
