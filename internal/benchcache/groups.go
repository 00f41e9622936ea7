package benchcache

import (
	"fmt"
	"slices"
	"sort"

	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/peers"
)

// The groups a report sorts layouts into, in report order.
const (
	GroupSeeds  = "seeds"  // layouts of the designs strata was built from (docs/)
	GroupPeers  = "peers"  // the caching rules of agents people run today
	GroupStrata = "strata" // strata's own layout
	GroupOther  = "other"  // any other registered layout
	GroupOracle = "oracle" // the lower bound
)

// Groups lists the layout groups in report order (the oracle last).
var Groups = []string{GroupSeeds, GroupPeers, GroupStrata, GroupOther, GroupOracle}

var seedLayouts = map[string]bool{"flat": true, "kiro": true, "panels": true, "tiered": true, "tiered-flat": true, "stability": true}

// Group returns the group of a layout name: GroupStrata for cachefit,
// GroupSeeds for the layouts of the designs strata was built from (flat,
// kiro, panels, tiered, tiered-flat, stability), GroupPeers for the peers' caching rules
// (peers.Names), GroupOther for anything else.
func Group(layout string) string {
	switch {
	case layout == "cachefit":
		return GroupStrata
	case seedLayouts[layout]:
		return GroupSeeds
	case slices.Contains(peers.Names(), layout):
		return GroupPeers
	}
	return GroupOther
}

// AllLayouts returns every registered layout (prompt.Names), ordered by
// group (seeds, peers, strata, other), seeds by name and peers in
// peers.Names order: the `--layouts all` set.
func AllLayouts() []string {
	names := prompt.Names()
	rank := map[string]int{GroupSeeds: 0, GroupPeers: 1, GroupStrata: 2, GroupOther: 3}
	sort.SliceStable(names, func(i, j int) bool {
		gi, gj := rank[Group(names[i])], rank[Group(names[j])]
		if gi != gj {
			return gi < gj
		}
		if gi == rank[GroupPeers] {
			return slices.Index(peers.Names(), names[i]) < slices.Index(peers.Names(), names[j])
		}
		return names[i] < names[j]
	})
	return names
}

// GroupRatios is one group's layouts with their cost ratios to the oracle.
type GroupRatios struct {
	Group  string
	Ratios []Ratio
}

// GroupedRatios returns Ratios split by group, in Groups order (layout order
// kept within a group); empty groups are left out.
func (r *Report) GroupedRatios() []GroupRatios {
	var out []GroupRatios
	all := r.Ratios()
	for _, g := range Groups {
		var rs []Ratio
		for _, x := range all {
			if Group(x.Layout) == g {
				rs = append(rs, x)
			}
		}
		if len(rs) > 0 {
			out = append(out, GroupRatios{Group: g, Ratios: rs})
		}
	}
	return out
}

// Describe says in a few words how the sessions were derived: the scenario
// and its parameters, the agent when there is one, and the read step when
// Options.ReadStep replaced the price table's.
func (r *Report) Describe() string {
	s := "scenario " + string(r.Scenario)
	switch {
	case r.Pacing != nil && r.Pacing.Every < 0:
		s += " (no pauses)"
	case r.Pacing != nil && r.Pacing.Seed != 0:
		s += fmt.Sprintf(" (a %s pause, 1 call in %d at random, seed %d)", r.Pacing.Length, r.Pacing.Every, r.Pacing.Seed)
	case r.Pacing != nil:
		s += fmt.Sprintf(" (a %s pause after every %d calls)", r.Pacing.Length, r.Pacing.Every)
	case r.Parallel > 0:
		s += fmt.Sprintf(" (%d tool calls per response)", r.Parallel)
	}
	if r.Agent != "" {
		s += fmt.Sprintf(" · agent %s (%d static tokens)", r.Agent, r.StaticTokens)
	}
	if r.ReadStep > 0 {
		s += fmt.Sprintf(" · reads in %d-token steps (not the price table's)", r.ReadStep)
	}
	return s
}
