package cachesim

import (
	"math"
	"time"
)

// KeepAlive is a keep-alive ping policy: while a session is idle, re-send its
// last request with a one-token answer just before the cache entry would
// expire, so the entry is read (and its lifetime refreshed) instead of lost.
// Aider offers the same as --cache-keepalive-pings (Aider-AI/aider
// aider/coders/base_coder.py, warm_cache); strata bounds the number of pings
// with the ski-rental rule below instead of a user-chosen count.
//
// The zero KeepAlive never pings.
type KeepAlive struct {
	// Interval is how long after the last request (or ping) the next ping is
	// sent; 0 = never ping.
	Interval time.Duration
	// MaxPings is how many pings one idle stretch may cost at most.
	MaxPings int
}

// pingMargin is how long before the cache lifetime ends a ping is sent, so a
// slow ping still arrives while the entry lives.
const pingMargin = 30 * time.Second

// KeepAliveFor returns the keep-alive policy for p's provider.
//
// Only providers with explicit cache breakpoints and a written price above
// the read price ping (Anthropic, Bedrock): a lost entry costs a rewrite
// (CacheWrite5m) where a kept one costs a read (CacheRead), so a ping, which
// costs one read of the prompt, pays while fewer than
// (CacheWrite5m − CacheRead) / CacheRead pings have been sent for one idle
// stretch (the ski-rental bound: Anthropic's 1.25× / 0.1× → 11 pings, about
// 50 minutes). Pings go out CacheTTLSeconds − 30 s after the last request.
func KeepAliveFor(p Price) KeepAlive {
	if p.Provider != "anthropic" && p.Provider != "bedrock" {
		return KeepAlive{}
	}
	if p.CacheRead <= 0 || p.CacheWrite5m <= p.CacheRead {
		return KeepAlive{}
	}
	n := int(math.Floor((p.CacheWrite5m - p.CacheRead) / p.CacheRead))
	iv := p.TTL() - pingMargin
	if n <= 0 || iv <= 0 {
		return KeepAlive{}
	}
	return KeepAlive{Interval: iv, MaxPings: n}
}
