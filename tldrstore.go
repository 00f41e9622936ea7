package strata

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// Stored tl;drs (docs/panels.md, "tl;dr"): with Options.CompactTLDR the
// tl;dr of each long message text of a detached chunk is written by the
// model once per session and kept with the session in the store
// (session.Store.SaveTLDR, keyed by session.TLDRKey of the text). A loop
// that replays its compaction — a resumed or branched session, the new
// layout of an agent swap — takes the stored text: no request, no usage,
// and the chunk reads as it did, so the prompt prefix the provider cached
// stays the same.

// errTLDRFailedBefore: the session's earlier tl;dr request for a text
// failed, so its chunk kept the full text, as this one does.
var errTLDRFailedBefore = errors.New("its tl;dr request failed earlier in this session; the full text is kept, as then")

// tldrs is a session's stored tl;drs, read from the store on first use.
type tldrs struct {
	mu     sync.Mutex
	loaded bool
	texts  map[string]string // by session.TLDRKey of the source text
}

// storeTLDRs makes the tl;drs of cfg's compaction (when it writes any) the
// session's stored ones. A sub-agent's loops, built before, ask the model
// as before: they are never restored.
func (s *Session) storeTLDRs(cfg *agent.Config) {
	if cfg.Compaction == nil || cfg.Compaction.Summarize == nil {
		return
	}
	p := *cfg.Compaction
	p.Summarize = s.storedSummarizer(p.Summarize)
	cfg.Compaction = &p
}

// storedSummarizer returns ask behind the session's stored tl;drs: a text
// with a stored tl;dr gets it (zero usage; "" stored means the request had
// failed, and the text stays in full again); any other is asked of the
// model and the answer stored, a failed request as "". The answer is kept
// even when the store cannot take it (a warning says so): it was paid for,
// and only a later restore asks again.
func (s *Session) storedSummarizer(ask compact.Summarizer) compact.Summarizer {
	return func(ctx context.Context, text string) (string, llm.Usage, error) {
		key := session.TLDRKey(text)
		if got, ok, err := s.storedTLDR(ctx, key); err != nil {
			return "", llm.Usage{}, err
		} else if ok && got == "" {
			return "", llm.Usage{}, errTLDRFailedBefore
		} else if ok {
			return got, llm.Usage{}, nil
		}
		out, used, err := ask(ctx, text)
		keep := out
		if err != nil {
			keep = ""
		}
		if serr := s.ws.store.SaveTLDR(context.WithoutCancel(ctx), s.id, key, keep); serr != nil {
			s.ws.opts.Warn(fmt.Sprintf("session %s: the tl;dr of a detached message could not be stored, so a resumed session asks the model for it again: %v", s.id, serr))
		} else {
			s.tldr.mu.Lock()
			s.tldr.texts[key] = keep
			s.tldr.mu.Unlock()
		}
		return out, used, err
	}
}

// storedTLDR returns the session's stored tl;dr under key, reading the
// session's tl;drs from the store the first time.
func (s *Session) storedTLDR(ctx context.Context, key string) (string, bool, error) {
	t := &s.tldr
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.loaded {
		m, err := s.ws.store.TLDRs(ctx, s.id)
		if err != nil {
			return "", false, fmt.Errorf("session %s: read its stored tl;drs: %w", s.id, err)
		}
		t.texts, t.loaded = m, true
	}
	got, ok := t.texts[key]
	return got, ok, nil
}

// errNoStoredTLDR: strata render asks no model, and the text has no
// stored tl;dr.
var errNoStoredTLDR = errors.New("no stored tl;dr (render asks no model)")

// storedOnly returns a Summarizer that answers from texts (a session's
// stored tl;drs, by session.TLDRKey) and asks no model: any other text
// keeps its full text.
func storedOnly(texts map[string]string) compact.Summarizer {
	return func(_ context.Context, text string) (string, llm.Usage, error) {
		if got := texts[session.TLDRKey(text)]; got != "" {
			return got, llm.Usage{}, nil
		}
		return "", llm.Usage{}, errNoStoredTLDR
	}
}
