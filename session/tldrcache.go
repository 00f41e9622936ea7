package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/llm"
)

// Stored tl;drs (docs/panels.md, "tl;dr"): with strata.Options.CompactTLDR
// the tl;dr of each long message text of a detached chunk is written by the
// model once per session and kept with the session in the store
// (TLDRStore.SaveTLDR, keyed by TLDRKey of the text). A loop that replays
// its compaction — a resumed or branched session, the new layout of an
// agent swap — takes the stored text: no request, no usage, and the chunk
// reads as it did, so the prompt prefix the provider cached stays the same.

// errTLDRFailedBefore: the session's earlier tl;dr request for a text
// failed, so its chunk kept the full text, as this one does.
var errTLDRFailedBefore = errors.New("its tl;dr request failed earlier in this session; the full text is kept, as then")

// TLDRCache is one session's stored tl;drs, read from its store on first
// use. Safe for concurrent use.
type TLDRCache struct {
	store TLDRStore
	id    func() string
	warn  func(string)

	mu     sync.Mutex
	loaded bool
	texts  map[string]string // by TLDRKey of the source text
}

// NewTLDRCache returns the stored tl;drs of a session in store; id returns
// the session's full id (called at each use: a session being opened knows
// it only once stored); warn receives a warning when a tl;dr cannot be
// stored.
func NewTLDRCache(store TLDRStore, id func() string, warn func(string)) *TLDRCache {
	return &TLDRCache{store: store, id: id, warn: warn}
}

// Summarizer returns ask behind the stored tl;drs: a text with a stored
// tl;dr gets it (zero usage; "" stored means the request had failed, and
// the text stays in full again); any other is asked of the model and the
// answer stored, a failed request as "". The answer is kept even when the
// store cannot take it (a warning says so): it was paid for, and only a
// later restore asks again.
func (c *TLDRCache) Summarizer(ask compact.Summarizer) compact.Summarizer {
	return func(ctx context.Context, text string) (string, llm.Usage, error) {
		key := TLDRKey(text)
		if got, ok, err := c.stored(ctx, key); err != nil {
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
		if serr := c.store.SaveTLDR(context.WithoutCancel(ctx), c.id(), key, keep); serr != nil {
			c.warn(fmt.Sprintf("session %s: the tl;dr of a detached message could not be stored, so a resumed session asks the model for it again: %v", c.id(), serr))
		} else {
			c.mu.Lock()
			c.texts[key] = keep
			c.mu.Unlock()
		}
		return out, used, err
	}
}

// stored returns the stored tl;dr under key, reading the session's tl;drs
// from the store the first time.
func (c *TLDRCache) stored(ctx context.Context, key string) (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded {
		m, err := c.store.TLDRs(ctx, c.id())
		if err != nil {
			return "", false, fmt.Errorf("session %s: read its stored tl;drs: %w", c.id(), err)
		}
		c.texts, c.loaded = m, true
	}
	got, ok := c.texts[key]
	return got, ok, nil
}

// errNoStoredTLDR: strata render asks no model, and the text has no
// stored tl;dr.
var errNoStoredTLDR = errors.New("no stored tl;dr (render asks no model)")

// StoredTLDRsOnly returns a Summarizer that answers from texts (a session's
// stored tl;drs, by TLDRKey) and asks no model: any other text keeps its
// full text (strata render).
func StoredTLDRsOnly(texts map[string]string) compact.Summarizer {
	return func(_ context.Context, text string) (string, llm.Usage, error) {
		if got := texts[TLDRKey(text)]; got != "" {
			return got, llm.Usage{}, nil
		}
		return "", llm.Usage{}, errNoStoredTLDR
	}
}
