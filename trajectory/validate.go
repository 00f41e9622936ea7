package trajectory

import (
	"fmt"
	"math"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/token"
)

// ValidateOptions configures ValidateGemini.
type ValidateOptions struct {
	// Price gives the simulator's minimum, granularity and TTL; the zero
	// value means cachesim.Lookup(t.Model).
	Price cachesim.Price
	// Count counts each recorded message's tokens (token.O200k() when nil).
	// Counts are only used as proportions: each request's block counts are
	// rescaled so that they sum to the call's recorded prompt_tokens, so the
	// simulator works in the provider's own token units.
	Count token.Counter
	// PerUpstream keeps one cache per upstream provider (OpenRouter routed
	// calls to "Google" or "Google AI Studio", which do not share caches);
	// false assumes a single cache for the whole session.
	PerUpstream bool
}

// CallCheck compares one call's simulated and observed cached tokens.
type CallCheck struct {
	Call      int    // call number
	Provider  string // upstream provider
	Prompt    int64  // recorded prompt_tokens
	Observed  int64  // recorded cached_tokens
	Simulated int64  // simulator CacheRead
}

// Validation is the result of replaying one trajectory through the Gemini
// simulator.
type Validation struct {
	Calls []CallCheck
	// MAE is the mean absolute error |Simulated − Observed| over calls, in
	// tokens.
	MAE float64
	// SumObserved and SumSimulated are the cached tokens summed over calls;
	// SumPrompt the prompt tokens.
	SumObserved, SumSimulated, SumPrompt int64
}

// ValidateGemini replays t's requests as recorded (RawRequest: one block per
// message, sent at the call's created time) through the Gemini implicit-cache
// simulator and compares simulated with observed cached tokens per call. The
// error names the file when the model has no price.
func ValidateGemini(t *Trajectory, opt ValidateOptions) (*Validation, error) {
	p := opt.Price
	if p.ID == "" {
		var ok bool
		if p, ok = cachesim.Lookup(t.Model); !ok {
			return nil, fmt.Errorf("trajectory: %s: no price for model %q", t.Path, t.Model)
		}
	}
	count := opt.Count
	if count == nil {
		count = token.O200k()
	}
	memo := &memoCounter{c: count, m: map[string]int{}}
	sims := map[string]cachesim.Simulator{}
	v := &Validation{Calls: make([]CallCheck, 0, len(t.Calls))}
	var absErr float64
	for i, c := range t.Calls {
		r := cachesim.FromRequest(t.RawRequest(i), memo, c.Created, c.Usage.CompletionTokens)
		rescale(r.Blocks, c.Usage.PromptTokens)
		key := ""
		if opt.PerUpstream {
			key = c.Provider
		}
		sim := sims[key]
		if sim == nil {
			sim = cachesim.NewGemini(p)
			sims[key] = sim
		}
		res, err := sim.Simulate(r)
		if err != nil {
			return nil, fmt.Errorf("trajectory: %s: call %d: %w", t.Path, i, err)
		}
		v.Calls = append(v.Calls, CallCheck{Call: i, Provider: c.Provider, Prompt: c.Usage.PromptTokens, Observed: c.Usage.CachedTokens, Simulated: res.CacheRead})
		absErr += math.Abs(float64(res.CacheRead - c.Usage.CachedTokens))
		v.SumObserved += c.Usage.CachedTokens
		v.SumSimulated += res.CacheRead
		v.SumPrompt += c.Usage.PromptTokens
	}
	if len(v.Calls) > 0 {
		v.MAE = absErr / float64(len(v.Calls))
	}
	return v, nil
}

// rescale makes the block token counts sum to total, keeping their
// proportions (rounding on cumulative sums, so no block goes negative and the
// sum is exact).
func rescale(bs []cachesim.Block, total int64) {
	var sum int64
	for _, b := range bs {
		sum += b.Tokens
	}
	if sum <= 0 || total < 0 {
		return
	}
	s := float64(total) / float64(sum)
	var cum, prev int64
	for i := range bs {
		cum += bs[i].Tokens
		next := int64(math.Round(float64(cum) * s))
		bs[i].Tokens = next - prev
		prev = next
	}
}

// memoCounter caches counts by string: a session re-sends every message on
// each call, and exact BPE counting is the expensive part of a replay.
type memoCounter struct {
	c token.Counter
	m map[string]int
}

// Count returns the wrapped counter's count of s, computed once per string.
func (m *memoCounter) Count(s string) int {
	if n, ok := m.m[s]; ok {
		return n
	}
	n := m.c.Count(s)
	m.m[s] = n
	return n
}

// Name returns the wrapped counter's name.
func (m *memoCounter) Name() string { return m.c.Name() }
