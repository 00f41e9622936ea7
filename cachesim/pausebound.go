package cachesim

// pauseBound raises the oracle by what crossing each pause costs at least:
// the 1-hour keep-alive the per-key schedule assumes (a chain spans a gap of
// up to an hour at the 5-minute write price) is not free for the content
// written just before the pause.
//
// A pause is a gap between requests i and i+1 longer than p.TTL() and at
// most an hour (pauseAfter[i]; longer gaps are priced by the schedule's
// pings). crossing holds the keys first sent in request i (one copy in i
// and in i+1), written there and read in i+1 by the schedule (Oracle
// fills it only for requests before a pause). For request i+1 to read such a key
// K, the cache must hold at i+1 an entry for i+1's prefix through K. Nothing
// sent before i contains K, so that entry was written in i or in a
// keep-alive ping during the pause, and any layout pays one of:
//
//   - a ping: a request in the gap that reads or writes that prefix, so at
//     least CacheRead per token of i+1's prefix through K (the schedule
//     charges no ping for gaps under an hour);
//   - a 1-hour write of K in request i (K is past i's read point, so in a
//     written segment): CacheWrite1h − CacheWrite5m more per token of K;
//   - losing the read in i+1: K's cheapest schedule in which its occurrence
//     in i+1 is not a read (crossKey.lost more; any layout's costs for K
//     form such a schedule).
//
// A ping that keeps K keeps every key before K in i+1, so the bound is the
// cheapest cut: a ping through the q-th crossing key (CacheRead × tokens of
// i+1 through it) plus the cheaper of the other two for each crossing key
// after it (q = 0: no ping). Each key is first sent in one request, so no
// key is charged for two pauses, and the ping's reads of older keys are ones
// the schedule never charged. The choice is applied to classes (a 1-hour
// write, or the lost schedule) and the ping's reads are added to out[i].
func pauseBound(p Price, session []Request, pauseAfter []bool, out []Result, classes map[Key][]class, crossing map[Key]crossKey) {
	long := p.CacheWrite1h - p.CacheWrite5m
	type cand struct {
		key  Key
		cum  int64   // tokens of request i+1 through the key
		keep float64 // the cheaper of the 1-hour write and the lost read
	}
	var cands []cand
	for i := 0; i+1 < len(session); i++ {
		if !pauseAfter[i] {
			continue
		}
		cands = cands[:0]
		var cum int64
		var total float64
		for _, b := range session[i+1].Blocks {
			if b.Tokens > 0 {
				cum += b.Tokens
			}
			c, ok := crossing[b.Key]
			if !ok || c.req != i {
				continue
			}
			x := min(long*float64(c.w), c.lost)
			cands = append(cands, cand{key: b.Key, cum: cum, keep: x})
			total += x
		}
		if len(cands) == 0 {
			continue
		}
		best, bestQ := total, -1
		var before float64
		for q, c := range cands {
			before += c.keep
			if x := p.CacheRead*float64(c.cum) + total - before; x < best {
				best, bestQ = x, q
			}
		}
		if bestQ >= 0 {
			out[i].CacheRead += cands[bestQ].cum
			out[i].Prompt += cands[bestQ].cum
		}
		for _, c := range cands[bestQ+1:] {
			ck := crossing[c.key]
			if long*float64(ck.w) <= ck.lost {
				classes[c.key][0] = classWrite1h
			} else {
				classes[c.key] = ck.lostCls
			}
		}
	}
}

// crossKey is a key the per-key schedule writes in request req (its first
// occurrence, w tokens in one copy) and reads in req+1. lost is how much
// more (USD/MTok · tokens) its cheapest schedule costs when the read in
// req+1 is lost, lostCls that schedule.
type crossKey struct {
	req     int
	w       int64
	lost    float64
	lostCls []class
}
