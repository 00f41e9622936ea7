package cachefit

import "time"

// Anthropic's cache prices as multiples of the base input price, the same
// for every Claude model (Anthropic docs "Prompt caching", pricing: 5-minute
// writes 1.25×, 1-hour writes 2×, reads 0.1×).
const (
	write5m = 1.25
	write1h = 2.0
	read    = 0.1
	// shortTTL is the default cache lifetime (Anthropic docs "Prompt
	// caching"): a gap longer than this between two requests loses every
	// 5-minute entry.
	shortTTL = 5 * time.Minute
)

// gapModel is what cachefit knows of a session's pacing: the times of the
// requests so far (prompt.Context.Now; never the future). It chooses each
// request's breakpoint TTL from expected reuse:
//
//   - the cost of a 1-hour write is (write1h − write5m) = 0.75× the input
//     price on each token this request writes (the turn's new tokens, w);
//   - its gain is that the whole prompt (P tokens) survives a pause longer
//     than 5 minutes: read at 0.1× instead of rewritten at 1.25×, a gain of
//     1.15× P, if a pause follows;
//   - the chance that a pause follows is the observed rate λ = pauses / gaps
//     (a gap is the time between two requests, a pause a gap over 5
//     minutes), and in an agent session the prompt is about n turns long
//     after n requests (P ≈ n·w).
//
// So 1 hour pays when λ · n · 1.15 > 0.75. A session that has never paused
// keeps 5-minute breakpoints (λ = 0: a 1-hour write could only cost more);
// one pause in a session of n requests makes λ·n ≈ 1 and switches to 1 hour
// — on the request right after the pause, which rewrites the prompt anyway.
// Requests without a time (Now = 0) do not change the model.
type gapModel struct {
	last         int64 // Unix ms of the previous request; 0 = none yet
	calls        int   // requests with a time
	gaps, pauses int
}

// observe records a request sent at now (Unix ms; 0 = unknown) and returns
// the TTL its breakpoints get: "" (5 minutes) or "1h".
func (g *gapModel) observe(now int64) string {
	if now > 0 {
		if g.last > 0 && now >= g.last {
			g.gaps++
			if time.Duration(now-g.last)*time.Millisecond > shortTTL {
				g.pauses++
			}
		}
		g.last = now
		g.calls++
	}
	if g.gaps == 0 || g.pauses == 0 {
		return ""
	}
	rate := float64(g.pauses) / float64(g.gaps)
	if rate*float64(g.calls)*(write5m-read) > write1h-write5m {
		return "1h"
	}
	return ""
}

// ttlName names a breakpoint TTL for the Breakdown.
func ttlName(ttl string) string {
	if ttl == "" {
		return "5m"
	}
	return ttl
}
