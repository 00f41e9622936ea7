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

// Pings returns how many pings k sends in an idle gap: one at Interval,
// 2·Interval, … after the last request while the gap lasts (a ping that
// would go out at or after the next request is not sent), at most MaxPings.
func (k KeepAlive) Pings(gap time.Duration) int {
	if k.Interval <= 0 || k.MaxPings <= 0 || gap <= k.Interval {
		return 0
	}
	n := int((gap - 1) / k.Interval)
	return min(n, k.MaxPings)
}

// KeepAliveForRequest returns the keep-alive policy for the idle stretch
// after r: KeepAliveFor(p) with MaxPings lowered by the same ski-rental
// rule applied to what r leaves in the cache. A ping re-sends r: it reads
// the prefix up to r's last breakpoint (CacheRead) and pays the rest as
// Input; without pings, the tokens written for 5 minutes after r's last
// 1-hour breakpoint (all of the prefix when r has none) would be rewritten
// (CacheWrite5m − CacheRead more than a read). So a request whose prefix a
// 1-hour entry keeps all but a short tail of (cachefit's keep-alive) is not
// pinged, and one with no breakpoint, or under p's minimum, never is.
func KeepAliveForRequest(p Price, r Request) KeepAlive {
	k := KeepAliveFor(p)
	if k.Interval <= 0 {
		return k
	}
	var cum, cached, long, total int64
	for _, b := range r.Blocks {
		if b.Tokens > 0 {
			cum += b.Tokens
		}
		if b.Breakpoint {
			cached = cum
			if b.TTL >= TTL1h {
				long = cum
			}
		}
	}
	total = cum
	if cached < p.MinCacheableTokens || cached == 0 {
		return KeepAlive{}
	}
	ping := float64(cached)*p.CacheRead + float64(total-cached)*p.Input
	lost := float64(cached-long) * (p.CacheWrite5m - p.CacheRead)
	k.MaxPings = min(k.MaxPings, int(math.Floor(lost/ping)))
	if k.MaxPings <= 0 {
		return KeepAlive{}
	}
	return k
}

// PingOutput is the output tokens of one ping (a one-token answer).
const PingOutput = 1

// WithPings returns session with keep-alive pings inserted: after each
// request r whose successor comes more than policy(r).Interval later,
// policy(r).Pings(gap) copies of r (same blocks and breakpoints, Output
// PingOutput) sent Interval, 2·Interval, … after r. ping[i] reports whether
// out[i] is a ping. No ping follows the last request (the session ends).
// policy nil never pings.
func WithPings(session []Request, policy func(Request) KeepAlive) (out []Request, ping []bool) {
	out = make([]Request, 0, len(session))
	ping = make([]bool, 0, len(session))
	for i, r := range session {
		out, ping = append(out, r), append(ping, false)
		if policy == nil || i+1 == len(session) {
			continue
		}
		k := policy(r)
		for n := 1; n <= k.Pings(session[i+1].At.Sub(r.At)); n++ {
			out = append(out, Request{Blocks: r.Blocks, At: r.At.Add(time.Duration(n) * k.Interval), Output: PingOutput})
			ping = append(ping, true)
		}
	}
	return out, ping
}
