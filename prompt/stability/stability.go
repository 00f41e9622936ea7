// Package stability tracks how long each piece of context has stayed
// unchanged across requests and assigns it a cache tier (docs/tiered.md,
// "stability tracker"): L0 (most stable) … L3, or active.
//
// Items are keyed "file:{path}", "symbol:{path}" or "history:{N}". Each
// request, Update is given every item present with a hash of its content:
//
//   - an item seen with the same hash as last time gains one to its count N;
//   - a new item, or one whose hash changed, restarts at N = 0 (active): a
//     change demotes it out of every cached tier at once;
//   - an item absent from the update is forgotten.
//
// An item's tier follows from N through Thresholds (promotion one step at a
// time as N grows). The tiered-assembly design leaves the thresholds to a
// document strata does not have (docs/tiered.md, rule 14); strata's defaults (3, 6,
// 9, 12 requests) are documented on DefaultThresholds.
package stability

import (
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

// Thresholds are the unchanged-request counts an item needs to enter each
// tier: an item enters L3 at N ≥ L3, L2 at N ≥ L2, and so on.
type Thresholds struct{ L3, L2, L1, L0 int }

// DefaultThresholds: an item enters L3 after 3 requests unchanged, L2 after 6,
// L1 after 9, L0 after 12. Three requests is the least that lets a cache write
// at a breakpoint pay for itself on Anthropic (write ×1.25, read ×0.1).
var DefaultThresholds = Thresholds{L3: 3, L2: 6, L1: 9, L0: 12}

// Tracker is the stability tracker. The zero value uses DefaultThresholds.
// Not safe for concurrent use.
type Tracker struct {
	Thresholds Thresholds
	items      map[string]*item
}

type item struct {
	hash string
	n    int
}

// Update records one request's items (key → content hash) and returns the
// tier of each, by key.
func (t *Tracker) Update(items map[string]string) map[string]Tier {
	if t.items == nil {
		t.items = map[string]*item{}
	}
	for k := range t.items {
		if _, ok := items[k]; !ok {
			delete(t.items, k)
		}
	}
	out := make(map[string]Tier, len(items))
	for k, h := range items {
		it, ok := t.items[k]
		switch {
		case !ok:
			it = &item{hash: h}
			t.items[k] = it
		case it.hash != h:
			it.hash, it.n = h, 0
		default:
			it.n++
		}
		out[k] = t.tierOf(it.n)
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
