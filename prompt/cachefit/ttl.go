package cachefit

import (
	"fmt"
	"time"

	"github.com/strata-agent/strata/llm"
)

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
// requests so far (prompt.Context.Now; never the future). It decides from
// expected reuse whether a request keeps its prefix alive for an hour:
//
//   - keep-alive costs (write1h − write5m) = 0.75× the input price on the
//     one block per request written for an hour (keepAliveBreakpoints); the
//     model prices it as a whole turn (w tokens), an upper bound;
//   - it gains that the whole prompt (P tokens) survives a pause longer
//     than 5 minutes: read at 0.1× instead of rewritten at 1.25×, 1.15× P,
//     if a pause follows;
//   - the chance that a pause follows is the observed rate λ = pauses / gaps
//     (a gap is the time between two requests, a pause a gap over 5
//     minutes), and in an agent session the prompt is about n turns long
//     after n requests (P ≈ n·w).
//
// So keep-alive pays when λ · n · 1.15 > 0.75. A session that has never
// paused keeps plain 5-minute breakpoints (λ = 0: keep-alive could only
// cost more); after a pause, keep-alive starts with the request after the
// one that rewrote the prompt (that rewrite is cheapest at 5 minutes: the
// next request's one-block 1-hour write then covers all of it). Requests
// without a time (Now = 0) do not change the model.
type gapModel struct {
	last         int64 // Unix ms of the previous request; 0 = none yet
	calls        int   // requests with a time
	gaps, pauses int
}

// observe records a request sent at now (Unix ms; 0 = unknown) and reports
// whether it keeps its prefix alive for an hour.
func (g *gapModel) observe(now int64) bool {
	paused := false
	if now > 0 {
		if g.last > 0 && now >= g.last {
			g.gaps++
			if time.Duration(now-g.last)*time.Millisecond > shortTTL {
				g.pauses++
				paused = true
			}
		}
		g.last = now
		g.calls++
	}
	if paused || g.gaps == 0 || g.pauses == 0 {
		return false
	}
	rate := float64(g.pauses) / float64(g.gaps)
	return rate*float64(g.calls)*(write5m-read) > write1h-write5m
}

// keepAliveBreakpoints sets the breakpoints of a keep-alive request and
// returns the user messages they close. A cache entry covers its whole
// prefix, so a 1-hour entry ending anywhere late in the prompt keeps every
// block before it readable for an hour, whatever TTL those blocks were
// written with (Anthropic docs "Prompt caching", mixing TTLs: the 1-hour
// part of a prompt is billed at the 1-hour rate, the rest at 5 minutes).
// The breakpoints, in prompt order (1-hour ones first, as the API
// requires):
//
//	system                       1h  (read, or rewritten after a long idle)
//	first block of the reply     1h  the previous request's keep-alive point:
//	  before last                    read after a pause (distance 0, so the
//	                                 20-block lookback never misses it)
//	first block of the last      1h  this request's keep-alive point: the only
//	  reply                          tokens written for an hour
//	end of the last user message 5m  the rest of the turn, read by the next
//	                                 request
func keepAliveBreakpoints(req *llm.Request, msgs []llm.Message, last int) []int {
	var replies []int // the last two assistant messages, newest first
	for i := last - 1; i >= 0 && len(replies) < 2; i-- {
		if msgs[i].Role == llm.RoleAssistant && len(msgs[i].Content) > 0 {
			replies = append(replies, i)
		}
	}
	for j := len(replies) - 1; j >= 0; j-- {
		req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage, Message: replies[j], Block: 0, TTL: "1h"})
	}
	req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage, Message: last, Block: len(msgs[last].Content) - 1})
	return []int{last}
}

// breakNote describes the message breakpoints for the Breakdown.
func breakNote(keepAlive bool, users int) string {
	if keepAlive {
		return "keep-alive: 1h breakpoints on the first block of the last two replies, 5m on the last user message"
	}
	return fmt.Sprintf("%d rolling 5m breakpoint(s) on the last user messages", users)
}
