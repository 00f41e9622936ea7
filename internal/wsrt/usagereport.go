package wsrt

import (
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// UsageReport mirrors strata.UsageReport field for field (a type conversion turns one into
// the other); strata.UsageReport documents the fields.
type UsageReport struct {
	Context int64
	Window  int64
	CostUSD float64
	Priced  bool
}

// UsageReport implements strata.Session.UsageReport (documented there).
func (s *Session) UsageReport() UsageReport {
	if s.keep == nil {
		return UsageReport{Window: providers.ContextWindow(s.ws.prov.Model)}
	}
	c := s.keep.Cost(s.Usage())
	return UsageReport{Context: c.Context, Window: providers.ContextWindow(c.Model), CostUSD: c.USD, Priced: c.Priced}
}

// KeepAlive implements strata.Session.KeepAlive (documented there).
func (s *Session) KeepAlive() keepalive.Stats { return s.keep.Stats() }

// keepAlive makes cfg's provider go through the session's keeper (created
// on first use). Call it after loopConfig, so the sub-agents and the
// compaction summarizer keep the bare provider.
func (s *Session) keepAlive(prov llm.Provider, model string, layout prompt.Layout) llm.Provider {
	if s.keep == nil {
		w := s.ws
		s.keep = keepalive.New(w.opts.KeepAlive, w.Offline(), s.bus, func() string { return s.id })
	}
	return s.keep.Wrap(prov, model, layout)
}
