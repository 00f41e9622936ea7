package benchcache

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/stability"
	"github.com/strata-agent/strata/prompt/tiered"
)

// thresholdCandidates are the stability thresholds measured for the
// tiered layout (docs/tiered.md, "Choosing the thresholds").
var thresholdCandidates = []struct {
	name  string
	th    stability.Thresholds
	eager bool
}{
	{"1/2/3/4", stability.Thresholds{L3: 1, L2: 2, L1: 3, L0: 4}, false},
	{"1/3/5/7", stability.Thresholds{L3: 1, L2: 3, L1: 5, L0: 7}, false},
	{"1/4/7/10", stability.Thresholds{L3: 1, L2: 4, L1: 7, L0: 10}, false},
	{"1/5/9/13", stability.Thresholds{L3: 1, L2: 5, L1: 9, L0: 13}, false},
	{"2/3/4/5", stability.Thresholds{L3: 2, L2: 3, L1: 4, L0: 5}, false},
	{"2/4/6/8", stability.Thresholds{L3: 2, L2: 4, L1: 6, L0: 8}, false},
	{"2/5/8/11", stability.Thresholds{L3: 2, L2: 5, L1: 8, L0: 11}, false},
	{"3/5/7/9", stability.Thresholds{L3: 3, L2: 5, L1: 7, L0: 9}, false},
	{"3/6/9/12", stability.Thresholds{L3: 3, L2: 6, L1: 9, L0: 12}, false},
	{"4/8/12/16", stability.Thresholds{L3: 4, L2: 8, L1: 12, L0: 16}, false},
	{"5/10/15/20", stability.Thresholds{L3: 5, L2: 10, L1: 15, L0: 20}, false},
	{"3/6/9/12 eager", stability.Thresholds{L3: 3, L2: 6, L1: 9, L0: 12}, true},
}

// TestTieredThresholdTable prices the tiered layout with each candidate
// threshold set on every train trajectory (Anthropic cache simulator, both
// scenarios) and prints the table docs/tiered.md shows
// (go test ./internal/benchcache -run TieredThresholdTable -v). It checks
// that stability.DefaultThresholds is the cheapest set measured, so a
// change of the defaults or the rules that loses to another set fails.
func TestTieredThresholdTable(t *testing.T) {
	if testing.Short() {
		t.Skip("prices 60 trajectories × 6 variants × 2 scenarios")
	}
	dir := shared.Path(t, "data/trajectories/mini-swe-agent/train")
	o := Options{Provider: "anthropic", Factories: map[string]func() prompt.Layout{}}
	for _, c := range thresholdCandidates {
		o.Layouts = append(o.Layouts, c.name)
		o.Factories[c.name] = func() prompt.Layout { return tiered.NewWith(c.th, c.eager) }
	}
	var b strings.Builder
	b.WriteString("| thresholds L3/L2/L1/L0 | append: cost × oracle | append: hit ratio | managed: cost × oracle | managed: hit ratio |\n|---|---|---|---|---|\n")
	cost := map[string]float64{}
	reps := map[Scenario]*Report{}
	for _, sc := range []Scenario{Append, Managed} {
		sessions, err := LoadDir(dir, sc)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(sessions, sc, o)
		if err != nil {
			t.Fatal(err)
		}
		reps[sc] = rep
		for _, r := range rep.Ratios() {
			cost[r.Layout] += rep.Layouts[r.Layout].CostUSD
		}
	}
	for _, c := range thresholdCandidates {
		a, m := reps[Append], reps[Managed]
		fmt.Fprintf(&b, "| %s | %.3f | %.3f | %.3f | %.3f |\n", c.name, a.Layouts[c.name].CostUSD/a.Oracle.CostUSD, a.Layouts[c.name].HitRatio,
			m.Layouts[c.name].CostUSD/m.Oracle.CostUSD, m.Layouts[c.name].HitRatio)
	}
	t.Log("\n" + b.String())
	names := append([]string(nil), o.Layouts...)
	sort.Slice(names, func(i, j int) bool { return cost[names[i]] < cost[names[j]] })
	def := fmt.Sprintf("%d/%d/%d/%d", stability.DefaultThresholds.L3, stability.DefaultThresholds.L2, stability.DefaultThresholds.L1, stability.DefaultThresholds.L0)
	if names[0] != def {
		t.Errorf("cheapest over both scenarios is %s ($%.2f), not the default %s ($%.2f)", names[0], cost[names[0]], def, cost[def])
	}
}
