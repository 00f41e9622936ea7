package strata

import (
	"context"
	"time"

	"github.com/strata-agent/strata/internal/wsrt"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
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
	r, err := w.rt.Render(ctx, wsrt.RenderOptions(o))
	if err != nil {
		return nil, err
	}
	out := Rendered(*r)
	return &out, nil
}
