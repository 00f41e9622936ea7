package cachesim

import "time"

// Automatic simulates automatic (implicit) prefix caching: no breakpoints, no
// write cost. For each request the longest live cached prefix (at block
// boundaries) of length L tokens is read, rounded down to the provider's
// granularity: 0 when L < Min, else Min + ⌊(L − Min) / Granularity⌋ ·
// Granularity (OpenAI docs "Prompt caching": caching starts at 1,024 tokens
// and hits grow in 128-token increments). A prompt shorter than Min is
// neither read nor cached. Every block boundary of a prompt of at least Min
// tokens is then cached (or refreshed) for TTL, measured from this request
// (idle expiry). Breakpoints in the Request are ignored. Input is the prompt
// minus CacheRead; CacheWrite is always 0.
//
// Server routing (OpenAI hashes the first ~256 tokens and prompt_cache_key;
// OpenRouter may switch upstream providers) is not modelled: every request of
// the session is assumed to reach the same cache.
type Automatic struct {
	name        string
	min         int64
	granularity int64
	ttl         time.Duration
	cache       store
	buf         prefixBuf
}

// NewAutomatic returns an automatic prefix-cache simulator named name with the
// given minimum prompt tokens, granularity in tokens (≤ 0 means 1) and idle
// TTL (≤ 0 means TTL5m).
func NewAutomatic(name string, minTokens, granularity int64, ttl time.Duration) *Automatic {
	if granularity <= 0 {
		granularity = 1
	}
	if ttl <= 0 {
		ttl = TTL5m
	}
	return &Automatic{name: name, min: minTokens, granularity: granularity, ttl: ttl, cache: store{}}
}

// NewOpenAI returns the OpenAI simulator with p's minimum (1,024 tokens),
// granularity (128 tokens) and TTL. The TTL in prices.json is 5 minutes, the
// low end of OpenAI's "cached prefixes generally remain active for 5 to 10
// minutes of inactivity, up to a maximum of one hour during off-peak periods"
// (OpenAI docs "Prompt caching"): the conservative choice never invents hits.
// Extended 24 h retention (prompt_cache_retention) and the explicit
// breakpoints of newer models are not modelled.
func NewOpenAI(p Price) *Automatic {
	return NewAutomatic("openai", p.MinCacheableTokens, p.CacheGranularityTokens, p.TTL())
}

// NewGemini returns the Gemini implicit-caching simulator with p's minimum,
// granularity and TTL (Gemini API docs "Context caching", implicit caching:
// enabled by default on Gemini 2.5 and later, minimum input tokens per model,
// savings passed on automatically, no write cost). Google documents neither
// the granularity nor the TTL of implicit caches; prices.json records the
// values assumed and why.
func NewGemini(p Price) *Automatic {
	return NewAutomatic("gemini", p.MinCacheableTokens, p.CacheGranularityTokens, p.TTL())
}

// NewDeepSeek returns the DeepSeek context-caching simulator (DeepSeek API
// docs "Context Caching": on by default, prefix matches in 64-token units,
// no write charge, caches cleared after hours to days unused).
func NewDeepSeek(p Price) *Automatic {
	return NewAutomatic("deepseek", p.MinCacheableTokens, p.CacheGranularityTokens, p.TTL())
}

// ForPrice returns the simulator for p's provider: Anthropic for
// "anthropic", Bedrock for "bedrock", OpenAI, Gemini or DeepSeek for theirs,
// and an Automatic simulator with p's parameters for any other provider.
func ForPrice(p Price) Simulator {
	switch p.Provider {
	case "anthropic":
		return NewAnthropic(p.MinCacheableTokens)
	case "bedrock":
		return NewBedrock(p.MinCacheableTokens)
	case "openai":
		return NewOpenAI(p)
	case "gemini":
		return NewGemini(p)
	case "deepseek":
		return NewDeepSeek(p)
	}
	return NewAutomatic(p.Provider, p.MinCacheableTokens, p.CacheGranularityTokens, p.TTL())
}

// Name returns the provider id given at construction.
func (s *Automatic) Name() string { return s.name }

// Reset empties the cache.
func (s *Automatic) Reset() { s.cache = store{} }

// Simulate applies one request; see Automatic for the rules. It never fails.
func (s *Automatic) Simulate(r Request) (Result, error) {
	s.buf.fill(r.Blocks)
	h, cum := s.buf.hash, s.buf.cum
	n := len(cum)
	var total int64
	if n > 0 {
		total = cum[n-1]
	}
	res := Result{Output: r.Output, Requests: 1, Prompt: total}
	if total < s.min || n == 0 {
		res.Input = total
		return res, nil
	}
	hit := -1
	for j := n - 1; j >= 0 && cum[j] >= s.min; j-- {
		if s.cache.alive(h[j], r.At) {
			hit = j
			break
		}
	}
	if hit >= 0 {
		l := cum[hit]
		res.CacheRead = stepDown(l, s.min, s.granularity)
	}
	for j := 0; j < n; j++ {
		if cum[j] >= s.min {
			s.cache.put(h[j], r.At, s.ttl)
		}
	}
	res.Input = total - res.CacheRead
	return res, nil
}

var _ Simulator = (*Automatic)(nil)
