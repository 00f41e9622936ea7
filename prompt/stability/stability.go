// Package stability tracks how long each piece of context has stayed
// unchanged across requests and assigns it a cache tier (docs/tiered.md,
// "stability tracker"): L0 (most stable) … L3, or active.
//
// Items are keyed "file:{path}", "symbol:{path}" or "history:{N}". Each
// request, Update is given every item present with a hash of its content,
// and applies these rules (docs/tiered.md, rules 13–14b):
//
//  1. Counting: an item seen with the same hash as last time gains one to
//     its count N; a new item starts at N = 0 in active.
//  2. Demotion: an item whose hash changed restarts at N = 0 and leaves its
//     tier for active at once; an item absent from the update is forgotten.
//     Either breaks the tier it was in.
//  3. Eligibility: N makes an item eligible for a tier through Thresholds
//     (L3 at N ≥ Thresholds.L3, … L0 at N ≥ Thresholds.L0).
//  4. Promote only into a broken tier: an eligible item moves into a more
//     stable tier only when that tier's cached prefix is already lost this
//     request — the tier changed (rule 2), a more stable tier is broken
//     (tiers are cached in prompt order L0 → L3, so a break invalidates
//     every later tier), or the tier is empty. Otherwise the item waits
//     where it is (keeps counting) and the stable tier keeps its cache hit.
//     L3 is the exception: only the uncached active part follows it, so an
//     item enters L3 as soon as it is eligible.
//  5. Ripple: tiers are settled from L0 to L3, and an item promoted out of
//     a tier breaks that tier, so items waiting below it may follow into it
//     in the same request (one invalidation, several promotions). With the
//     prefix order of rule 4 every tier after a broken one is broken too,
//     so a promotion out of L1 into a broken L0 always lets L2's eligible
//     items into L1, and so on down.
//
// Tracker.Eager turns rules 4 and 5 off (every eligible item moves at
// once), for comparison. The thresholds were chosen by measurement on the
// train trajectories (docs/tiered.md, "Choosing the thresholds").
package stability

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Tier is a cache tier: L0 is the most stable; Active is not cached.
type Tier int

// Tiers, most stable first.
const (
	L0 Tier = iota
	L1
	L2
	L3
	Active
)

// String returns "L0" … "L3" or "active".
func (t Tier) String() string {
	if t == Active {
		return "active"
	}
	return "L" + strconv.Itoa(int(t))
}

// Thresholds are the unchanged-request counts an item needs to be eligible
// for each tier: L3 at N ≥ L3, L2 at N ≥ L2, and so on.
type Thresholds struct{ L3, L2, L1, L0 int }

// DefaultThresholds: an item is eligible for L3 after 1 request unchanged,
// L2 after 4, L1 after 7, L0 after 10. They were the cheapest of the 11
// sets measured on the 60 train trajectories with the Anthropic cache
// simulator, both scenarios summed (docs/tiered.md, "Choosing the
// thresholds"; internal/benchcache TestTieredThresholdTable reproduces the
// table and fails if another measured set becomes cheaper). Entering L3
// early caches history sooner; spacing the stable tiers by 3 keeps them
// from being rewritten often.
var DefaultThresholds = Thresholds{L3: 1, L2: 4, L1: 7, L0: 10}

// Tracker is the stability tracker. The zero value uses DefaultThresholds
// and the broken-tier rule. Not safe for concurrent use.
type Tracker struct {
	Thresholds Thresholds
	// Eager promotes every eligible item at once, whether or not its new
	// tier's cache is broken (rules 4 and 5 off).
	Eager bool
	items map[string]*item
}

type item struct {
	hash string
	n    int
	tier Tier
}

// Update records one request's items (key → content hash), applies the
// rules of the package documentation, and returns the tier of each, by key.
// The result depends only on the sequence of updates (map order never
// matters).
func (t *Tracker) Update(items map[string]string) map[string]Tier {
	if t.items == nil {
		t.items = map[string]*item{}
	}
	var size [Active]int
	var broken [Active]bool
	for k, it := range t.items {
		if it.tier < Active {
			size[it.tier]++
		}
		if _, ok := items[k]; !ok {
			if it.tier < Active {
				broken[it.tier] = true
			}
			delete(t.items, k)
		}
	}
	for k, h := range items {
		it, ok := t.items[k]
		switch {
		case !ok:
			t.items[k] = &item{hash: h, tier: Active}
		case it.hash != h:
			if it.tier < Active {
				broken[it.tier] = true
			}
			it.hash, it.n, it.tier = h, 0, Active
		default:
			it.n++
		}
	}
	for tier := L0; tier < Active; tier++ {
		if tier > L0 && broken[tier-1] || size[tier] == 0 {
			broken[tier] = true
		}
		if !broken[tier] && tier != L3 && !t.Eager {
			continue
		}
		for _, it := range t.items {
			if it.tier > tier && t.tierOf(it.n) <= tier {
				if it.tier < Active {
					broken[it.tier] = true // ripple: its old tier changed
				}
				it.tier = tier
				broken[tier] = true
			}
		}
	}
	out := make(map[string]Tier, len(items))
	for k := range items {
		out[k] = t.items[k].tier
	}
	return out
}

// N returns how many consecutive requests the item has stayed unchanged (-1
// when unknown).
func (t *Tracker) N(key string) int {
	if it, ok := t.items[key]; ok {
		return it.n
	}
	return -1
}

func (t *Tracker) tierOf(n int) Tier {
	th := t.Thresholds
	if th == (Thresholds{}) {
		th = DefaultThresholds
	}
	switch {
	case n >= th.L0:
		return L0
	case n >= th.L1:
		return L1
	case n >= th.L2:
		return L2
	case n >= th.L3:
		return L3
	}
	return Active
}

// Keys returns the keys of tiers that are in tier, sorted: files and symbols
// by path, history by index (numerically).
func Keys(tiers map[string]Tier, tier Tier) []string {
	var out []string
	for k, t := range tiers {
		if t == tier {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return keyLess(out[i], out[j]) })
	return out
}

func keyLess(a, b string) bool {
	ha, oka := strings.CutPrefix(a, "history:")
	hb, okb := strings.CutPrefix(b, "history:")
	if oka && okb {
		na, _ := strconv.Atoi(ha)
		nb, _ := strconv.Atoi(hb)
		return na < nb
	}
	return a < b
}

// itemState is one tracked item as JSON.
type itemState struct {
	Hash string `json:"hash"`
	N    int    `json:"n"`
	Tier Tier   `json:"tier"`
}

// MarshalJSON returns the tracker's per-item state (key → content hash,
// unchanged-request count, tier); the thresholds are configuration and are
// not included.
func (t *Tracker) MarshalJSON() ([]byte, error) {
	m := make(map[string]itemState, len(t.items))
	for k, it := range t.items {
		m[k] = itemState{it.hash, it.n, it.tier}
	}
	return json.Marshal(m)
}

// UnmarshalJSON restores what MarshalJSON returned, keeping the thresholds.
func (t *Tracker) UnmarshalJSON(data []byte) error {
	var m map[string]itemState
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	t.items = make(map[string]*item, len(m))
	for k, s := range m {
		t.items[k] = &item{s.Hash, s.N, s.Tier}
	}
	return nil
}
