package cachesim

import "time"

// entry is one cached prefix: alive until exp; reads extend it by ttl.
type entry struct {
	exp time.Time
	ttl time.Duration
}

// store maps a prefix hash (see prefixes) to its cache entry. A prefix is
// identified by the chain of its block keys, so a change to any earlier block
// gives every later prefix a different hash (prefix matching).
type store map[uint64]entry

// alive reports whether prefix h is cached at time at (an entry is alive up to
// and including its expiry instant).
func (s store) alive(h uint64, at time.Time) bool {
	e, ok := s[h]
	return ok && !at.After(e.exp)
}

// refresh extends a live entry to at+its TTL (reads refresh the TTL:
// Anthropic docs "Prompt caching", "refreshed for no additional cost each time
// the cached content is used").
func (s store) refresh(h uint64, at time.Time) {
	e, ok := s[h]
	if !ok || at.After(e.exp) {
		return
	}
	if exp := at.Add(e.ttl); exp.After(e.exp) {
		e.exp = exp
		s[h] = e
	}
}

// put writes prefix h with the given TTL, keeping a later expiry and the
// longer TTL of an entry already there.
func (s store) put(h uint64, at time.Time, ttl time.Duration) {
	e, ok := s[h]
	if ok && !at.After(e.exp) {
		if ttl > e.ttl {
			e.ttl = ttl
		}
		if exp := at.Add(ttl); exp.After(e.exp) {
			e.exp = exp
		}
		s[h] = e
		return
	}
	s[h] = entry{exp: at.Add(ttl), ttl: ttl}
}

// prefixBuf holds, for the current request, the hash of each block-boundary
// prefix and the cumulative tokens up to it; reused across requests.
type prefixBuf struct {
	hash []uint64 // hash[i]: prefix made of blocks[0..i]
	cum  []int64  // cum[i]: tokens of blocks[0..i]
}

// fill computes the prefix hashes and cumulative tokens of blocks. Negative
// token counts are treated as 0 (bad input never panics or goes negative).
func (p *prefixBuf) fill(blocks []Block) {
	n := len(blocks)
	if cap(p.hash) < n {
		p.hash = make([]uint64, n)
		p.cum = make([]int64, n)
	}
	p.hash, p.cum = p.hash[:n], p.cum[:n]
	var h uint64 = 0x6a09e667f3bcc908
	var c int64
	for i, b := range blocks {
		h = mix(h ^ uint64(b.Key))
		t := b.Tokens
		if t < 0 {
			t = 0
		}
		c += t
		p.hash[i], p.cum[i] = h, c
	}
}

// mix is the splitmix64 finaliser: a cheap bijective 64-bit mixer, so that the
// chained prefix hash of two different key sequences differs with
// overwhelming probability.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
