package wsrt

import (
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/session"
)

// storeTLDRs makes the tl;drs of cfg's compaction (when it writes any) the
// session's stored ones (session.TLDRCache, created on first use). A
// sub-agent's loops, built before, ask the model as before: they are
// never restored.
func (s *Session) storeTLDRs(cfg *agent.Config) {
	if cfg.Compaction == nil || cfg.Compaction.Summarize == nil {
		return
	}
	if s.tldr == nil {
		s.tldr = session.NewTLDRCache(s.ws.store, s.ID, s.ws.opts.Warn)
	}
	p := *cfg.Compaction
	p.Summarize = s.tldr.Summarizer(p.Summarize)
	cfg.Compaction = &p
}
