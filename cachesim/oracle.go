package cachesim

import (
	"math"
	"time"
)

// Oracle returns, for each request of a session (in order, with
// non-decreasing At), the cheapest token split any layout could achieve under
// p's prices and cache rules: the theoretical lower bound of DESIGN.md,
// computed per block content independently of where blocks sit or where
// breakpoints go.
//
// Per content Key, look at the requests that contain it, in time order:
//
//   - an occurrence whose previous occurrence lies within the TTL is charged
//     as CacheRead (DESIGN.md: "already sent earlier in the same session
//     within the TTL");
//   - an occurrence that starts such a chain (the next occurrence is within
//     the TTL) is charged as a cache write at the TTL's write price;
//   - any other occurrence is charged at the base input price (Input).
//
// With one TTL (p.TTL(), 5 minutes) this is exactly DESIGN.md's rule. When
// p also offers a 1-hour write (CacheWrite1h > 0: Anthropic, Bedrock), the
// chains may span gaps of up to an hour at the 5-minute write price. That is
// what the cheapest layout can do: a cache entry covers its whole prefix, so
// one 1-hour write of a single small block late in a request keeps every
// block before it readable for an hour, whatever TTL those blocks were
// written with. Charging each block's 1-hour write in full, as a per-block
// schedule of both TTLs would, is not a lower bound: a layout that keeps its
// prefix alive this way costs less. What that keep-alive cannot cover is the
// content first sent in the request just before a pause (a gap over the
// TTL, up to an hour): pauseBound charges it the cheapest of a ping through
// it, its own 1-hour write or its lost read. A layout that knows where the
// pauses fall comes within 0.2 % of the result (TestPauseBoundReachable).
// Where writes are free (CacheWrite5m == Input: OpenAI, Gemini, DeepSeek)
// chain starts are reported as Input. Several copies of one key in
// the same request share the class of that occurrence.
//
// The simulators' rules that bind every layout are honoured, each only where
// doing so keeps the result a lower bound:
//
//   - minimum: a request whose whole prompt is under p.MinCacheableTokens can
//     neither read nor write (every cached prefix is at least that long), so
//     its blocks are Input and take no part in any chain;
//   - automatic caches (free writes): every request reads the tokens it may,
//     and a simulator reads a prefix of them rounded down to the provider's
//     steps (Automatic): 0 under the minimum, else min + ⌊(R − min) / g⌋ · g.
//     The oracle applies the same rounding to its own read count R, which
//     bounds any layout's (rounding is monotone), and moves the rest to
//     Input.
//
// Keep-alive pings (KeepAliveFor: Anthropic, Bedrock) are allowed too: a
// chain may span a gap longer than its TTL when pings keep the entry alive,
// each ping charged as one read of the key (ttl apart, ⌈gap/ttl⌉ − 1 of
// them, without the ping bound: the oracle knows the gaps). A real ping
// reads the whole prompt, so charging each key only for itself keeps the
// bound below any pinging layout. With the 1-hour keep-alive above this
// matters only for gaps over an hour.
//
// Breakpoint limits, the lookback, and the minimum of each single
// breakpoint's prefix on Anthropic are not modelled: each only removes hits,
// so ignoring them keeps the bound valid.
func Oracle(p Price, session []Request) []Result {
	out := make([]Result, len(session))
	type occ struct {
		req    int
		w      int64 // tokens of all copies of the key in this request
		copies int
	}
	occs := map[Key][]occ{}
	var order []Key // first-seen order, for determinism
	for i, r := range session {
		out[i] = Result{Output: r.Output, Requests: 1}
		if total := r.InputTokens(); total < p.MinCacheableTokens {
			out[i].Prompt, out[i].Input = total, total
			continue
		}
		for _, b := range r.Blocks {
			if b.Tokens <= 0 {
				continue
			}
			out[i].Prompt += b.Tokens
			list := occs[b.Key]
			if len(list) == 0 {
				order = append(order, b.Key)
			}
			if n := len(list); n > 0 && list[n-1].req == i {
				list[n-1].w += b.Tokens
				list[n-1].copies++
			} else {
				list = append(list, occ{req: i, w: b.Tokens, copies: 1})
			}
			occs[b.Key] = list
		}
	}
	opts := []ttlOption{{ttl: p.TTL(), write: p.CacheWrite5m, long: false}}
	if p.CacheWrite1h > 0 {
		// Keep-alive (see the doc): content written once at the 5-minute
		// price stays readable for an hour.
		opts[0].ttl = max(opts[0].ttl, TTL1h)
	}
	freeWrites := p.CacheWrite5m <= p.Input
	pings := KeepAliveFor(p).Interval > 0
	var times []time.Time
	var ws []int64
	sched := func(list []occ, cls []class) ([]class, float64) {
		times, ws = times[:0], ws[:0]
		for _, o := range list {
			times, ws = append(times, session[o.req].At), append(ws, o.w)
		}
		return scheduleCost(times, ws, p.Input, p.CacheRead, opts, pings, cls)
	}
	// pauseAfter[i]: the gap after request i is a pause pauseBound prices.
	pauseAfter := make([]bool, len(session))
	if p.CacheWrite1h > 0 && !freeWrites {
		for i := 0; i+1 < len(session); i++ {
			gap := session[i+1].At.Sub(session[i].At)
			pauseAfter[i] = gap > p.TTL() && gap <= time.Hour
		}
	}
	n := 0
	for _, list := range occs {
		n += len(list)
	}
	arena := make([]class, 0, n) // every key's classes, one allocation
	classes := make(map[Key][]class, len(order))
	crossing := map[Key]crossKey{} // see pauseBound
	for _, k := range order {
		list := occs[k]
		cls, cost := sched(list, arena[len(arena):])
		arena = arena[:len(arena)+len(cls)]
		classes[k] = cls
		if pauseAfter[list[0].req] && len(list) > 1 && list[1].req == list[0].req+1 &&
			list[0].copies == 1 && list[1].copies == 1 && cls[0] == classWrite5m && cls[1] == classRead {
			// The same key if its read in list[1] is lost: the first
			// occurrence alone (base), the rest scheduled on its own.
			lostCls := make([]class, 1, len(list))
			rest, restCost := sched(list[1:], lostCls[1:])
			crossing[k] = crossKey{req: list[0].req, w: list[0].w,
				lost: float64(list[0].w)*p.Input + restCost - cost, lostCls: lostCls[:1+len(rest)]}
		}
	}
	if len(crossing) > 0 {
		pauseBound(p, session, pauseAfter, out, classes, crossing)
	}
	for _, k := range order {
		list, cls := occs[k], classes[k]
		for n, o := range list {
			r := &out[o.req]
			switch cls[n] {
			case classRead:
				r.CacheRead += o.w
				if np := pingsBetween(session[list[n-1].req].At, session[o.req].At, opts[0].ttl, pings); np > 0 {
					// The pings that kept the entry alive re-send the
					// previous occurrence's request: charged there.
					prev := &out[list[n-1].req]
					prev.CacheRead += int64(np) * list[n-1].w
					prev.Prompt += int64(np) * list[n-1].w
				}
			case classWrite5m:
				if freeWrites {
					r.Input += o.w
				} else {
					r.CacheWrite5m += o.w
				}
			case classWrite1h:
				r.CacheWrite1h += o.w
			default:
				r.Input += o.w
			}
		}
	}
	for i := range out {
		if freeWrites {
			r := &out[i]
			got := stepDown(r.CacheRead, p.MinCacheableTokens, p.CacheGranularityTokens)
			r.Input += r.CacheRead - got
			r.CacheRead = got
		}
		out[i].CacheWrite = out[i].CacheWrite5m + out[i].CacheWrite1h
	}
	return out
}

// pingsBetween returns how many pings, ttl apart, keep an entry written or
// read at a alive until b: KeepAlive.Pings with Interval ttl and no bound,
// ⌈(b − a)/ttl⌉ − 1 (0 when !pings).
func pingsBetween(a, b time.Time, ttl time.Duration, pings bool) int {
	if !pings {
		return 0
	}
	return KeepAlive{Interval: ttl, MaxPings: math.MaxInt}.Pings(b.Sub(a))
}

// stepDown rounds a read of n tokens down to what an automatic cache with
// the given minimum and granularity (≤ 0 means 1) reports (see Automatic).
func stepDown(n, min, granularity int64) int64 {
	if granularity <= 0 {
		granularity = 1
	}
	if n < min || n <= 0 {
		return 0
	}
	return min + (n-min)/granularity*granularity
}

// Sum returns the field-wise sum of results.
func Sum(results []Result) Result {
	var s Result
	for _, r := range results {
		s = s.Add(r)
	}
	return s
}

type class uint8

const (
	classBase class = iota
	classRead
	classWrite5m
	classWrite1h
)

type ttlOption struct {
	ttl   time.Duration
	write float64 // USD/MTok
	long  bool
}

// scheduleCost returns the cheapest class of each occurrence of one key and
// their cost (prices × tokens: USD/MTok · tokens), given
// the occurrence times (non-decreasing) and weights (tokens). A chain j..i
// (all consecutive gaps ≤ ttl, i > j) costs w_j·write + read·Σ_{j<l≤i} w_l; an
// occurrence outside any chain costs w·base. With pings, a chain may also
// span longer gaps: the gap after occurrence l costs read·w_l·(⌈gap/ttl⌉ − 1)
// more (the pings that keep it alive), kept in the prefix sums P. f[i] = min(f[i−1] + w_i·base,
// min_j f[j−1] + w_j·write − read·W_j + read·W_i) over the chain starts j the
// gaps allow, found with a sliding-window minimum (a monotone deque), so the
// whole schedule is O(k) per TTL option.
func scheduleCost(times []time.Time, ws []int64, base, read float64, opts []ttlOption, pings bool, cls []class) ([]class, float64) {
	k := len(times)
	cls = append(cls[:0], make([]class, k)...)
	if k == 0 {
		return cls, 0
	}
	f := make([]float64, k+1)  // f[i]: best cost of occurrences 1..i (1-based)
	W := make([]float64, k+1)  // prefix sums of weights
	how := make([]int, k+1)    // -1: base; else chain start j (1-based)
	howOpt := make([]int, k+1) // option index of the chain
	for i := 1; i <= k; i++ {
		W[i] = W[i-1] + float64(ws[i-1])
	}
	// P[o][i]: read-weighted pings of option o for the gaps after
	// occurrences 1..i−1 (a chain j..i pays P[o][i] − P[o][j]).
	P := make([][]float64, len(opts))
	for o := range opts {
		P[o] = make([]float64, k+1)
		for i := 2; i <= k; i++ {
			P[o][i] = P[o][i-1]
			P[o][i] += float64(ws[i-2]) * float64(pingsBetween(times[i-2], times[i-1], opts[o].ttl, pings))
		}
	}
	type dq struct {
		idx []int // candidate chain starts, g increasing
		lo  int   // smallest valid start for the current i
	}
	qs := make([]dq, len(opts))
	for o := range qs {
		qs[o].lo = 1
	}
	g := func(o, j int) float64 { return f[j-1] + float64(ws[j-1])*opts[o].write - read*(W[j]+P[o][j]) }
	for i := 1; i <= k; i++ {
		f[i] = f[i-1] + float64(ws[i-1])*base
		how[i], howOpt[i] = -1, -1
		for o := range opts {
			q := &qs[o]
			if i > 1 && !pings && times[i-1].Sub(times[i-2]) > opts[o].ttl {
				q.lo = i
				q.idx = q.idx[:0]
			}
			if i > 1 && q.lo <= i-1 {
				// j = i−1 becomes a candidate start (f[i−2] is final).
				j := i - 1
				gj := g(o, j)
				for len(q.idx) > 0 && g(o, q.idx[len(q.idx)-1]) >= gj {
					q.idx = q.idx[:len(q.idx)-1]
				}
				q.idx = append(q.idx, j)
			}
			for len(q.idx) > 0 && q.idx[0] < q.lo {
				q.idx = q.idx[1:]
			}
			if len(q.idx) == 0 {
				continue
			}
			j := q.idx[0]
			if c := g(o, j) + read*(W[i]+P[o][i]); c < f[i] {
				f[i], how[i], howOpt[i] = c, j, o
			}
		}
	}
	for i := k; i >= 1; {
		if how[i] < 0 {
			cls[i-1] = classBase
			i--
			continue
		}
		j := how[i]
		if opts[howOpt[i]].long {
			cls[j-1] = classWrite1h
		} else {
			cls[j-1] = classWrite5m
		}
		for l := j + 1; l <= i; l++ {
			cls[l-1] = classRead
		}
		i = j - 1
	}
	return cls, f[k]
}
