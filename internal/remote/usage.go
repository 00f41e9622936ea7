package remote

import (
	"sync"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/llm"
)

// Usage follows a remote session's usage from its events, for the front
// ends' status (the chat's status bar, ACP's usage_update): the provider
// and model of the last request, the tokens the conversation holds after
// the last model call and the calls' summed usage, keep-alive pings
// included. Safe for concurrent use; the zero value is ready.
type Usage struct {
	mu              sync.Mutex
	provider, model string
	context         int64
	usage           llm.Usage
}

// Report is what a Usage knows: Context and Window in tokens (Window 0 =
// unknown), CostUSD valid only when Priced.
type Report struct {
	Provider, Model string
	Context, Window int64
	Usage           llm.Usage
	CostUSD         float64
	Priced          bool
}

// Seed names the provider and model until the session's events name
// them (a front end's flags: the workers may choose otherwise).
func (u *Usage) Seed(provider, model string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.provider, u.model = provider, model
}

// Observe takes one event of the session: a ProviderRequest names the
// model asked for (a response may name a dated id), a ProviderResponse
// adds its usage and sets the context (its prompt tokens plus its
// output), a CacheKeepAlive ping adds its usage and leaves the context.
func (u *Usage) Observe(e event.Event) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case e.Kind == event.ProviderRequest:
		if e.Provider != "" {
			u.provider = e.Provider
		}
		if e.Model != "" {
			u.model = e.Model
		}
	case e.Kind == event.ProviderResponse && e.Usage != nil:
		u.usage = u.usage.Add(*e.Usage)
		u.context = e.Usage.PromptTokens() + e.Usage.Output
	case e.Kind == event.CacheKeepAlive && e.Usage != nil:
		u.usage = u.usage.Add(*e.Usage)
	}
}

// Report returns what u has seen, priced by keepalive.PriceUnknownTTL
// (the events do not split cache writes by TTL), as keepalive.Keeper.Cost
// prices the calls whose breakpoints it did not see.
func (u *Usage) Report() Report {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := Report{Provider: u.provider, Model: u.model, Context: u.context, Window: providers.ContextWindow(u.model), Usage: u.usage}
	r.CostUSD, r.Priced = keepalive.PriceUnknownTTL(u.model, u.usage)
	return r
}
