package panels

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/prompt"
)

// costs is step 7 of Context Pilot's context preparation (docs/panels.md,
// "cache cost tracking"): each panel's content is hashed and compared with
// the previous request's hash list by prefix: a panel is a cache hit when
// its hash equals the one at the same position of the previous list and
// every panel before it is a hit too. Per-panel costs accumulate at the
// model's prices (cachesim price table): hits at the cache-read price,
// misses at the input price.
type costs struct {
	prev  []string           // hashes of the previous request's panels, in order
	total map[string]float64 // panel id → USD so far
}

// Hash returns the hex SHA-256 of a panel's bytes as sent, first 16 digits.
func Hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// track marks the panels of one request (ids, the bytes each sends and
// their tokens, in prompt order) and returns their cache bookkeeping. An
// unknown model prices every panel at 0.
func (t *costs) track(model string, ids, sent []string, tokens []int) []prompt.SpanCache {
	if t.total == nil {
		t.total = map[string]float64{}
	}
	price, _ := cachesim.Lookup(model)
	out := make([]prompt.SpanCache, len(ids))
	hashes := make([]string, len(ids))
	prefix := true
	for i := range ids {
		hashes[i] = Hash(sent[i])
		prefix = prefix && i < len(t.prev) && t.prev[i] == hashes[i]
		per := price.Input
		if prefix {
			per = price.CacheRead
		}
		cost := float64(tokens[i]) * per / 1e6
		t.total[ids[i]] += cost
		out[i] = prompt.SpanCache{Hash: hashes[i], Hit: prefix, Cost: cost, Total: t.total[ids[i]]}
	}
	t.prev = hashes
	return out
}
