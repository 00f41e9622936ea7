package cachefit

import (
	"fmt"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
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

// TTLRule names how cachefit decides that a request keeps its prefix alive
// for an hour (Options.TTLRule; see gapModel).
type TTLRule string

// The rules. The default (DefaultOptions) is chosen by cross-validation on
// the train sessions of the paced scenario (docs/cachefit.md).
const (
	// TTLPing weighs the 1-hour keep-alive against the runtime's keep-alive
	// pings, from the request's own token counts (see gapModel).
	TTLPing TTLRule = "ping"
	// TTLRewrite weighs it against rewriting the whole prompt after a
	// pause, as if no ping were sent (the rule before pings).
	TTLRewrite TTLRule = "rewrite"
	// TTLNever never writes for an hour: pauses are bridged by pings only.
	TTLNever TTLRule = "never"
)

// gapModel is what cachefit knows of a session's pacing: the times of the
// requests so far (prompt.Context.Now; never the future). A gap is the time
// between two requests, a pause a gap over 5 minutes; a session that has
// never paused keeps plain 5-minute breakpoints. Requests without a time
// (Now = 0) do not change the model.
//
// The chance λ that a pause follows a request is estimated per state, the
// state being whether the request itself came after a pause (a first-order
// Markov chain of pauses): λ = (pauses after requests in that state + k·ρ) /
// (gaps after them + k), where ρ = pauses / gaps over the whole session and
// k = Options.PausePrior (1 by default, chosen with the TTL rule by
// cross-validation on the train sessions, docs/cachefit.md). A person who pauses every few calls never pauses twice in a
// row, one who pauses at random does; the chain learns which from the
// session, and with few observations of a state λ stays near ρ.
//
// While the session idles the runtime pings (prompt.KeepAliveReporter,
// cachesim.KeepAliveForRequest): one ping re-reads the whole prompt (P
// tokens) at 0.1× so nothing is rewritten after the pause. The 1-hour
// keep-alive (keepAliveBreakpoints) costs instead (write1h − write5m) =
// 0.75× on what the request writes for an hour (f tokens: the first block
// of the last reply; right after a pause that followed a keep-alive request,
// also the turn behind the previous 1-hour point, which the pause lost and
// this request rewrites), and after a pause rewrites the t tokens of the
// turn behind it (1.15× more than a read) — a request so protected is not
// pinged. So, under TTLPing, keep-alive pays when
//
//	λ · (0.1 · P − 1.15 · t) > 0.75 · f
//
// (TTLRewrite, the rule before pings: λ = ρ, λ · n · 1.15 > 0.75 after n
// requests, when a pause costs a rewrite of everything; the request right
// after a pause keeps 5-minute breakpoints).
type gapModel struct {
	rule         TTLRule
	prior        float64 // k (Options.PausePrior)
	last         int64   // Unix ms of the previous request; 0 = none yet
	calls        int     // requests with a time
	gaps, pauses int
	// per state (0: the request came after a short gap or first, 1: after
	// a pause): gaps that followed such a request, and pauses among them
	stateGaps, statePauses [2]int
	state                  int  // the last request's state
	kept                   bool // the last request kept its prefix alive
}

// requestSize is what the TTL rule weighs, in tokens: the prompt, the first
// block of its last reply, the rest of its last turn from there, and the
// turn between the previous reply's first block and that reply (what a
// request right after a pause rewrites behind the previous 1-hour point).
type requestSize struct {
	prompt, first, tail, since int
}

// observe records a request sent at now (Unix ms; 0 = unknown) and reports
// whether it keeps its prefix alive for an hour, given its size, counted
// only when TTLPing needs it (after a pause: a session that never paused
// does not count its prompt again on every request).
func (g *gapModel) observe(now int64, size func() requestSize) bool {
	if now > 0 {
		if g.last > 0 && now >= g.last {
			pause := time.Duration(now-g.last)*time.Millisecond > shortTTL
			g.gaps++
			g.stateGaps[g.state]++
			if pause {
				g.pauses++
				g.statePauses[g.state]++
			}
			g.state = 0
			if pause {
				g.state = 1
			}
		}
		g.last = now
		g.calls++
	}
	g.kept = g.decide(size)
	return g.kept
}

// decide applies the rule (see gapModel) to the request observe recorded.
func (g *gapModel) decide(size func() requestSize) bool {
	if g.gaps == 0 || g.pauses == 0 || g.rule == TTLNever {
		return false
	}
	rho := float64(g.pauses) / float64(g.gaps)
	if g.rule == TTLRewrite {
		return g.state == 0 && rho*float64(g.calls)*(write5m-read) > write1h-write5m
	}
	s, k := g.state, g.prior
	if k <= 0 {
		k = 1
	}
	rate := (float64(g.statePauses[s]) + k*rho) / (float64(g.stateGaps[s]) + k)
	sz := size()
	f := sz.first
	if s == 1 && g.kept {
		f += sz.since
	}
	return rate*(read*float64(sz.prompt)-(write5m-read)*float64(sz.tail)) > (write1h-write5m)*float64(f)
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
	replies := lastReplies(msgs, last)
	for j := len(replies) - 1; j >= 0; j-- {
		req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage, Message: replies[j], Block: 0, TTL: "1h"})
	}
	req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage, Message: last, Block: len(msgs[last].Content) - 1})
	return []int{last}
}

// lastReplies returns the indexes of the last two non-empty assistant
// messages before msgs[last], newest first: the replies whose first blocks
// carry the keep-alive breakpoints.
func lastReplies(msgs []llm.Message, last int) []int {
	var replies []int
	for i := last - 1; i >= 0 && len(replies) < 2; i-- {
		if msgs[i].Role == llm.RoleAssistant && len(msgs[i].Content) > 0 {
			replies = append(replies, i)
		}
	}
	return replies
}

// breakNote describes the message breakpoints for the Breakdown.
func breakNote(keepAlive bool, users int) string {
	if keepAlive {
		return "keep-alive: 1h breakpoints on the first block of the last two replies, 5m on the last user message"
	}
	return fmt.Sprintf("%d rolling 5m breakpoint(s) on the last user messages", users)
}

// promptTokens estimates the request's prompt: tools, system text and the
// laid-out messages (c's counter).
func (l *Layout) promptTokens(c *prompt.Context, msgs []llm.Message) int {
	n := c.ToolTokens(c.Tools) + c.Tokens(systemText(c, l.static))
	for _, m := range msgs {
		n += c.BlockTokens(m.Content)
	}
	return n
}

// turnSizes returns the tokens of the first block of the last reply before
// msgs[last] (what a keep-alive request writes for an hour), of the rest of
// the turn from there to the end (what a pause would make it rewrite), and
// of the turn between the previous reply's first block and that reply (what
// a request right after a pause rewrites behind the previous 1-hour point);
// with no reply, 0, the last message and 0.
func turnSizes(c *prompt.Context, msgs []llm.Message, last int) (first, tail, since int) {
	replies := lastReplies(msgs, last)
	if len(replies) == 0 {
		return 0, c.BlockTokens(msgs[last].Content), 0
	}
	r := replies[0]
	first = c.BlockTokens(msgs[r].Content[:1])
	tail = c.BlockTokens(msgs[r].Content[1:])
	for _, m := range msgs[r+1 : last+1] {
		tail += c.BlockTokens(m.Content)
	}
	if len(replies) == 2 {
		p := replies[1]
		since = c.BlockTokens(msgs[p].Content[1:])
		for _, m := range msgs[p+1 : r] {
			since += c.BlockTokens(m.Content)
		}
	}
	return first, tail, since
}
