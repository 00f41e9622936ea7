package benchcache

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/cachefit"
)

// cvContexts are the cachefit DiffContext values cross-validated.
var cvContexts = []int{0, 1, 2, 3, 5, 8}

// TestManagedCrossValidation chooses cachefit's managed-scenario parameter
// (DiffContext) by 5-fold cross-validation over the 60 train sessions
// (folds by sorted name, 12 sessions each): in each fold the value with the
// lowest in-fold cost ratio to the oracle is chosen on the other 48 and
// scored on the 12 held out. It logs in-fold and out-of-fold ratios per
// simulator and checks that cachefit.DefaultOptions is the value the folds
// choose most often. It takes about a minute and a half on 2 cores, so it
// runs only with STRATA_CV=1 (the README gives the command and quotes the
// table).
func TestManagedCrossValidation(t *testing.T) {
	if os.Getenv("STRATA_CV") != "1" {
		t.Skip("cross-validation prices 60 sessions × 10 layouts × 2 simulators (~90 s): set STRATA_CV=1 to run it")
	}
	all := trainSubset(t, 60, Managed)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	var names []string
	byName := map[string]int{}
	for _, c := range cvContexts {
		n := fmt.Sprintf("cachefit-ctx%d", c)
		names = append(names, n)
		byName[n] = c
	}
	factories := map[string]func() prompt.Layout{}
	for n, c := range byName {
		factories[n] = func() prompt.Layout { return cachefit.NewWith(cachefit.Options{DiffContext: c}) }
	}
	const folds = 5
	votes := map[int]int{}
	var log strings.Builder
	fmt.Fprintf(&log, "provider fold chosen in-fold out-of-fold (cachefit cost / oracle)\n")
	for _, provider := range []string{"anthropic", "openai"} {
		// Price every session once; folds only sum per-trajectory figures.
		rep, err := Run(all, Managed, Options{Provider: provider, Layouts: append(names, "flat", "kiro", "panels", "tiered"), Factories: factories})
		if err != nil {
			t.Fatal(err)
		}
		ratio := func(idx []int, layout string) float64 {
			var c, o float64
			for _, i := range idx {
				c += rep.Details[i].Layouts[layout].CostUSD
				o += rep.Details[i].Oracle.CostUSD
			}
			return c / o
		}
		var inAll, outAll float64
		for f := 0; f < folds; f++ {
			in, out := cvFold(len(all), folds, f)
			best := lowest(names, func(n string) float64 { return ratio(in, n) })
			votes[byName[best]]++
			ri, ro := ratio(in, best), ratio(out, best)
			inAll += ri / folds
			outAll += ro / folds
			fmt.Fprintf(&log, "%s %d DiffContext=%d %.4f %.4f\n", provider, f, byName[best], ri, ro)
		}
		fmt.Fprintf(&log, "%s mean in-fold %.4f, out-of-fold %.4f\n", provider, inAll, outAll)
		for _, n := range names {
			fmt.Fprintf(&log, "%s all 60, %s: %.4f\n", provider, n, ratio(seq(len(all)), n))
		}
	}
	t.Log("\n" + log.String())
	choice, n := 0, -1
	for _, c := range cvContexts {
		if votes[c] > n {
			choice, n = c, votes[c]
		}
	}
	if cachefit.DefaultOptions.DiffContext != choice {
		t.Errorf("cross-validation chooses DiffContext=%d (%d of %d folds); cachefit.DefaultOptions has %d",
			choice, n, 2*folds, cachefit.DefaultOptions.DiffContext)
	}
}

// cvFold splits n sessions for fold f of folds: out holds those whose
// index ≡ f (mod folds), in the others.
func cvFold(n, folds, f int) (in, out []int) {
	for i := range n {
		if i%folds == f {
			out = append(out, i)
		} else {
			in = append(in, i)
		}
	}
	return in, out
}

// lowest returns the name with the lowest score (the first of a tie).
func lowest(names []string, score func(string) float64) string {
	best := names[0]
	for _, n := range names {
		if score(n) < score(best) {
			best = n
		}
	}
	return best
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// cvPacings are the pacings the TTL rule is chosen on: the paced sweep's
// pause periods (-1 = no pauses) and, with seed 1, memoryless pauses at the
// same mean rates (a person who may pause after any call).
var cvPacings = []Pacing{
	{Every: -1}, {Every: 3}, {Every: 5}, {Every: 10}, {Every: 20}, {Every: 40},
	{Every: 3, Seed: 1}, {Every: 5, Seed: 1}, {Every: 10, Seed: 1},
}

// TestPacedTTLCrossValidation chooses cachefit's TTL rule (TTLPing with a
// pause prior k of 0.5, 1, 2 or 4, TTLRewrite, TTLNever; all with
// keep-alive pings) by 5-fold cross-validation over the train sessions of
// the paced scenario: in each fold the rule with the lowest in-fold mean
// cost ratio to the oracle over cvPacings (Anthropic) is chosen on 48
// sessions and scored on the 12 held out. It logs in-fold and out-of-fold
// ratios and checks that cachefit.DefaultOptions has the rule the folds
// choose most often. STRATA_CV=1 runs it (a minute or two).
func TestPacedTTLCrossValidation(t *testing.T) {
	if os.Getenv("STRATA_CV") != "1" {
		t.Skip("cross-validation prices 60 sessions × 6 rules × 9 pacings: set STRATA_CV=1 to run it")
	}
	candidates := map[string]cachefit.Options{
		"cachefit-rewrite": {TTLRule: cachefit.TTLRewrite},
		"cachefit-never":   {TTLRule: cachefit.TTLNever},
	}
	for _, k := range []float64{0.5, 1, 2, 4} {
		candidates[fmt.Sprintf("cachefit-ping-k%g", k)] = cachefit.Options{TTLRule: cachefit.TTLPing, PausePrior: k}
	}
	factories := map[string]func() prompt.Layout{}
	var names []string
	for n, o := range candidates {
		names = append(names, n)
		factories[n] = func() prompt.Layout { return cachefit.NewWith(o) }
	}
	sort.Strings(names)
	var reps []*Report
	for _, pacing := range cvPacings {
		pacing.Length = DefaultPauseLength
		ss := trainSubsetWith(t, 60, Paced, Derivation{Pacing: pacing})
		sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
		rep, err := Run(ss, Paced, Options{Provider: "anthropic", Layouts: names, Factories: factories})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	// ratio is the mean over pacings of a rule's cost / oracle on idx.
	ratio := func(idx []int, layout string) float64 {
		var sum float64
		for _, rep := range reps {
			var c, o float64
			for _, i := range idx {
				c += rep.Details[i].Layouts[layout].CostUSD
				o += rep.Details[i].Oracle.CostUSD
			}
			sum += c / o
		}
		return sum / float64(len(reps))
	}
	const folds = 5
	votes := map[string]int{}
	var log strings.Builder
	var inAll, outAll float64
	for f := 0; f < folds; f++ {
		in, out := cvFold(len(reps[0].Details), folds, f)
		best := lowest(names, func(n string) float64 { return ratio(in, n) })
		votes[best]++
		ri, ro := ratio(in, best), ratio(out, best)
		inAll += ri / folds
		outAll += ro / folds
		fmt.Fprintf(&log, "fold %d: %s in-fold %.4f out-of-fold %.4f\n", f, best, ri, ro)
	}
	fmt.Fprintf(&log, "mean over pacings: in-fold %.4f, out-of-fold %.4f\n", inAll, outAll)
	for _, n := range names {
		fmt.Fprintf(&log, "all 60, %s:", n)
		for k, rep := range reps {
			fmt.Fprintf(&log, " every %d", cvPacings[k].Every)
			if cvPacings[k].Seed != 0 {
				fmt.Fprint(&log, " (random)")
			}
			fmt.Fprintf(&log, " %.4f", rep.Layouts[n].CostUSD/rep.Oracle.CostUSD)
		}
		fmt.Fprintln(&log)
	}
	t.Log("\n" + log.String())
	choice, n := "", -1
	for _, name := range names {
		if votes[name] > n {
			choice, n = name, votes[name]
		}
	}
	def := cachefit.DefaultOptions
	if want := fmt.Sprintf("cachefit-%s-k%g", def.TTLRule, def.PausePrior); choice != want {
		t.Errorf("cross-validation chooses %s (%d of %d folds); cachefit.DefaultOptions has %s", choice, n, folds, want)
	}
}
