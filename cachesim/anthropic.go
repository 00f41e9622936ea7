package cachesim

import "fmt"

// Lookback is how many block positions a breakpoint checks for a cache hit,
// its own included (Anthropic docs "Prompt caching", 20-block lookback
// window: with cache_control on block 30 the system checks blocks 30, 29, …,
// 11 and stops after 20 checks).
const Lookback = 20

// Anthropic simulates Anthropic's explicit prompt caching (Messages API
// cache_control). Rules (Anthropic docs "Prompt caching"):
//
//   - Only blocks closed by a breakpoint are written; at most MaxBreakpoints
//     per request (more → ErrTooManyBreakpoints, the request is rejected).
//   - For each breakpoint at block b, the cache is checked at the prefixes
//     ending at b, b−1, …, b−19 (Lookback); the longest live prefix found over
//     all breakpoints is read (CacheRead) and its TTL refreshed, along with the
//     live entries of its shorter prefixes.
//   - Every breakpoint beyond the read point whose prefix holds at least the
//     model's minimum cacheable tokens is written: the tokens from the previous
//     written point (or the read point) up to it count as CacheWrite with that
//     breakpoint's TTL (the 1 h / 5 m billing split of the docs' "mixing TTLs"
//     example). A write caches every block boundary of the written prefix
//     (that is how the lookback example finds a hit at block 24 after a write
//     at block 30). A breakpoint under the minimum writes nothing.
//   - Everything after the last written breakpoint is Input. Prefix matching:
//     a changed block invalidates every prefix that contains it.
//   - A 1 h breakpoint after a 5 m one → ErrTTLOrder.
//
// Tool choice, thinking parameters and images also invalidate parts of the
// cache on the real service; the simulator only sees block contents.
type Anthropic struct {
	name  string
	min   int64
	cache store
	buf   prefixBuf
	bps   []int
}

// NewAnthropic returns a simulator for an Anthropic model with the given
// minimum cacheable prefix in tokens (Price.MinCacheableTokens: 1024, 2048 for
// Haiku 3/3.5, 4096 for Opus 4.5/4.6 and Haiku 4.5).
func NewAnthropic(minCacheable int64) *Anthropic {
	return &Anthropic{name: "anthropic", min: minCacheable, cache: store{}}
}

// NewBedrock returns the simulator for Claude models behind Bedrock Converse
// cachePoint blocks: the same rules and minimums as Anthropic's API (AWS
// docs "Prompt caching for faster model inference": up to 4 cache checkpoints,
// per-model minimum tokens per checkpoint, 5-minute TTL reset on each hit).
// The 20-block lookback is not documented for Bedrock and is assumed equal.
func NewBedrock(minCacheable int64) *Anthropic {
	a := NewAnthropic(minCacheable)
	a.name = "bedrock"
	return a
}

// Name returns "anthropic" or "bedrock".
func (a *Anthropic) Name() string { return a.name }

// Reset empties the cache.
func (a *Anthropic) Reset() { a.cache = store{} }

// Simulate applies one request; see Anthropic for the rules.
func (a *Anthropic) Simulate(r Request) (Result, error) {
	a.bps = a.bps[:0]
	sawShort := false
	for i, b := range r.Blocks {
		if !b.Breakpoint {
			continue
		}
		a.bps = append(a.bps, i)
		long := b.TTL >= TTL1h
		if long && sawShort {
			return Result{}, fmt.Errorf("%w (block %d)", ErrTTLOrder, i)
		}
		if !long {
			sawShort = true
		}
	}
	if len(a.bps) > MaxBreakpoints {
		return Result{}, fmt.Errorf("%w: %d breakpoints", ErrTooManyBreakpoints, len(a.bps))
	}
	a.buf.fill(r.Blocks)
	h, cum := a.buf.hash, a.buf.cum
	var total int64
	if n := len(cum); n > 0 {
		total = cum[n-1]
	}
	res := Result{Output: r.Output, Requests: 1, Prompt: total}

	// Reads: the longest live prefix within each breakpoint's lookback.
	hit := -1
	for _, b := range a.bps {
		for j := b; j >= 0 && j > b-Lookback && j > hit; j-- {
			if a.cache.alive(h[j], r.At) {
				hit = j
				break
			}
		}
	}
	var read int64
	if hit >= 0 {
		read = cum[hit]
		for j := 0; j <= hit; j++ {
			a.cache.refresh(h[j], r.At)
		}
	}
	res.CacheRead = read

	// Writes: each breakpoint past the read point that meets the minimum.
	prev, prevIdx := read, hit
	for _, b := range a.bps {
		if b <= hit || cum[b] < a.min || cum[b] <= prev {
			continue
		}
		ttl := r.Blocks[b].TTL
		if ttl <= 0 {
			ttl = TTL5m
		}
		seg := cum[b] - prev
		if ttl >= TTL1h {
			res.CacheWrite1h += seg
		} else {
			res.CacheWrite5m += seg
		}
		for j := prevIdx + 1; j <= b; j++ {
			if cum[j] >= a.min {
				a.cache.put(h[j], r.At, ttl)
			}
		}
		prev, prevIdx = cum[b], b
	}
	res.CacheWrite = res.CacheWrite5m + res.CacheWrite1h
	res.Input = total - res.CacheRead - res.CacheWrite
	return res, nil
}

var _ Simulator = (*Anthropic)(nil)
