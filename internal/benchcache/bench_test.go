package benchcache

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	_ "github.com/strata-agent/strata/prompt/cachefit"
	_ "github.com/strata-agent/strata/prompt/flat"
	_ "github.com/strata-agent/strata/prompt/kiro"
	_ "github.com/strata-agent/strata/prompt/panels"
	_ "github.com/strata-agent/strata/prompt/tiered"
	"github.com/strata-agent/strata/trajectory"
)

var allLayouts = []string{"flat", "kiro", "panels", "tiered", "cachefit"}

// On a subset of the train trajectories, in every scenario with and without
// a real agent's static context, under the Anthropic, OpenAI and Gemini
// simulators: no layout costs less than the oracle on any trajectory (it is
// a lower bound), cachefit costs no more than any other registered layout
// (seeds and peers), and it is within 2% of the oracle (paced: see
// TestPacedCachefitTTL). Under the automatic caches (OpenAI, Gemini) reads
// are rounded down to 128 / 2,048-token steps, so where a prompt's length
// falls between two steps decides ties between layouts that send the same
// content: there cachefit may exceed another layout by the rounding noise
// (≤ 1%; on this subset kiro, whose requests are cachefit's plus 55 tokens
// of framing, is 0.6% cheaper under Gemini with the agent), on Anthropic by
// nothing. strata does not pad prompts to the steps (docs/cachefit.md, rule
// 7b). The same cells priced with 1-token steps (Options.ReadStep), which
// is what the rounding costs on average over where the steps fall, allow
// no tie: cachefit is the cheapest there too, so nothing but the rounding
// lets another layout below it.
func TestCachefitCheapestInEveryCell(t *testing.T) {
	agent := shared.Path(t, "data/agents/projects/johnmbergman__kiro-agents/.kiro/agents/researcher.json")
	static, err := LoadStatic(agent)
	if err != nil {
		t.Fatal(err)
	}
	layouts := AllLayouts()
	for _, st := range []*Static{nil, static} {
		for _, sc := range []Scenario{Append, Managed, Parallel} {
			ss := trainSubsetWith(t, 12, sc, Derivation{Static: st})
			for _, provider := range []string{"anthropic", "openai", "gemini"} {
				name := fmt.Sprintf("%s/%s/agent=%v", sc, provider, st != nil)
				rep, err := Run(ss, sc, Options{Provider: provider, Layouts: layouts})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				tie := 0.0
				if provider != "anthropic" {
					tie = 0.01 // read-step rounding ties (docs/cachefit.md, rule 7b)
				}
				checkCell(t, name, rep, 1.02, tie)
				if provider == "anthropic" {
					continue
				}
				rep, err = Run(ss, sc, Options{Provider: provider, Layouts: layouts, ReadStep: 1})
				if err != nil {
					t.Fatalf("%s, 1-token steps: %v", name, err)
				}
				checkCell(t, name+"/1-token steps", rep, 1.02, 0)
			}
		}
	}
}

// Options.ReadStep replaces the automatic caches' read step for the layouts
// and the oracle alike, says so in the report, and leaves Anthropic (no
// steps) alone.
func TestReadStepReplacesTheTablesStep(t *testing.T) {
	ss := trainSubset(t, 3, Append)
	layouts := []string{"flat", "kiro", "cachefit"}
	run := func(provider string, step int64) *Report {
		t.Helper()
		rep, err := Run(ss, Append, Options{Provider: provider, Layouts: layouts, ReadStep: step})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	table, fine := run("gemini", 0), run("gemini", 1)
	if table.ReadStep != 0 || fine.ReadStep != 1 || !strings.Contains(fine.Describe(), "1-token steps") {
		t.Errorf("read step in the reports: %d, %d (%q)", table.ReadStep, fine.ReadStep, fine.Describe())
	}
	for _, l := range layouts {
		a, b := table.Layouts[l], fine.Layouts[l]
		if b.CacheRead <= a.CacheRead || a.CacheRead%2048 != 0 || b.Input+b.CacheRead != a.Input+a.CacheRead {
			t.Errorf("%s: reads %d at 2,048-token steps, %d at 1-token steps (prompts %d, %d); want more at 1, the same prompts",
				l, a.CacheRead, b.CacheRead, a.Input+a.CacheRead, b.Input+b.CacheRead)
		}
	}
	if fine.Oracle.CacheRead <= table.Oracle.CacheRead {
		t.Errorf("oracle reads %d at 1-token steps, %d at the table's", fine.Oracle.CacheRead, table.Oracle.CacheRead)
	}
	a, b := run("anthropic", 0), run("anthropic", 1)
	if b.ReadStep != 0 || !reflect.DeepEqual(a.Layouts, b.Layouts) {
		t.Errorf("anthropic: ReadStep changed the report (step %d)", b.ReadStep)
	}
}

// checkCell asserts the oracle bound per trajectory, cachefit ≤ every other
// layout × (1 + tie), and cachefit ≤ limit × the oracle.
func checkCell(t *testing.T, name string, rep *Report, limit, tie float64) {
	t.Helper()
	for _, d := range rep.Details {
		for l, x := range d.Layouts {
			if x.CostUSD < d.Oracle.CostUSD*(1-1e-9) {
				t.Errorf("%s %s: layout %s costs %.6f, below the oracle %.6f", name, d.Name, l, x.CostUSD, d.Oracle.CostUSD)
			}
		}
	}
	cf := rep.Layouts["cachefit"].CostUSD
	for _, r := range rep.Ratios() {
		if c := rep.Layouts[r.Layout].CostUSD; c*(1+tie) < cf*(1-1e-9) {
			t.Errorf("%s: %s ($%.4f, %.3f×) is cheaper than cachefit ($%.4f)", name, r.Layout, c, r.Ratio, cf)
		}
	}
	if ratio := cf / rep.Oracle.CostUSD; ratio > limit {
		t.Errorf("%s: cachefit is %.4f× the oracle; goal ≤ %.2f", name, ratio, limit)
	}
}

// Paced sessions: without pauses the paced scenario prices exactly as
// append and nothing pings; with pauses the runtime pings for cachefit (and
// for no peer), the pings are priced, and the goal holds on all 60
// train sessions: cachefit ≤ 1.02× the oracle at a pause every 3 and 10
// calls (the densest pacing, where it is hardest, and the one of the 20 %
// claim; STRATA_FULL=1 adds 5; 20 and 40 are in docs/bench.md and in the
// cross-validation's sweep), and ≥ 20 % cheaper
// than every other layout at every 10 (on short subsets the first pause
// weighs more). Pauses only raise the oracle (cachesim's pause bound), never
// lower it.
func TestPacedCachefitTTL(t *testing.T) {
	layouts := AllLayouts()
	none := trainSubsetWith(t, 12, Paced, Derivation{Pacing: Pacing{Every: -1}})
	app := trainSubset(t, 12, Append)
	a, err := Run(app, Append, Options{Provider: "anthropic", Layouts: layouts})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Run(none, Paced, Options{Provider: "anthropic", Layouts: layouts})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layouts {
		if math.Abs(a.Layouts[l].CostUSD-p.Layouts[l].CostUSD) > 1e-9 || p.Layouts[l].Pings != 0 {
			t.Errorf("%s: paced without pauses $%.4f (%d pings), append $%.4f", l, p.Layouts[l].CostUSD, p.Layouts[l].Pings, a.Layouts[l].CostUSD)
		}
	}
	train := shared.Path(t, "data/trajectories/mini-swe-agent/train") // the goal is stated on all of train
	// two pacings keep the package well inside go test's 10 minutes on a loaded 2-core machine
	pacings := []int{3, 10}
	if os.Getenv("STRATA_FULL") == "1" {
		pacings = []int{3, 5, 10}
	}
	for _, every := range pacings {
		paced, err := LoadDirWith(train, Paced, Derivation{Pacing: Pacing{Every: every, Length: DefaultPauseLength}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(paced, Paced, Options{Provider: "anthropic", Layouts: layouts})
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("paced every %d", every)
		checkCell(t, name, rep, 1.02, 0)
		for _, l := range layouts {
			if n := rep.Layouts[l].Pings; (n > 0) != (l == "cachefit") {
				t.Errorf("%s: %s sent %d pings; only cachefit pings", name, l, n)
			}
		}
		if every == 10 {
			cf := rep.Layouts["cachefit"].CostUSD
			for _, l := range layouts {
				if c := rep.Layouts[l].CostUSD; l != "cachefit" && cf > 0.8*c {
					t.Errorf("%s: cachefit $%.4f is not 20%% cheaper than %s $%.4f", name, cf, l, c)
				}
			}
		}
		for i, d := range a.Details { // the subset is the first sessions of train
			if pd := rep.Details[i]; pd.Name != d.Name || pd.Oracle.CostUSD < d.Oracle.CostUSD*(1-1e-9) {
				t.Errorf("%s %s: pauses lowered the oracle: $%.4f vs $%.4f without (%s)", name, d.Name, pd.Oracle.CostUSD, d.Oracle.CostUSD, pd.Name)
			}
		}
	}
}

// The managed derivation: reads become working files with a reference in the
// history, an edit refreshes the file, and the result is deterministic.
func TestManagedDerivation(t *testing.T) {
	call := func(i int, cmd string) llm.Block {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return llm.ToolUseBlock("call_"+string(rune('0'+i)), "execute_bash", in)
	}
	res := func(i int, out string) llm.Block {
		return llm.ToolResultBlock("call_"+string(rune('0'+i)), "<returncode>0</returncode>\n<output>\n"+out+"\n</output>", false)
	}
	h := []llm.Message{
		llm.UserText("fix the bug"),
		{Role: llm.RoleAssistant, Content: []llm.Block{call(0, "cat pkg/a.py")}},
		{Role: llm.RoleUser, Content: []llm.Block{res(0, "def f():\n    return 1")}},
		{Role: llm.RoleAssistant, Content: []llm.Block{call(1, "nl -ba pkg/b.py | sed -n '10,12p'")}},
		{Role: llm.RoleUser, Content: []llm.Block{res(1, "10 x\n11 y\n12 z")}},
		{Role: llm.RoleAssistant, Content: []llm.Block{call(2, "sed -i 's/return 1/return 2/' pkg/a.py")}},
		{Role: llm.RoleUser, Content: []llm.Block{res(2, "")}},
		{Role: llm.RoleAssistant, Content: []llm.Block{call(3, "grep -rn f pkg")}},
		{Role: llm.RoleUser, Content: []llm.Block{res(3, "pkg/a.py:1:def f():")}},
	}
	m := newManager()
	hist, files := m.apply(h[:3], 1000)
	if len(files) != 1 || files[0].Path != "pkg/a.py" || files[0].Content != "def f():\n    return 1" || files[0].Refreshed != 1000 {
		t.Fatalf("after cat: %+v", files)
	}
	if got := hist[2].Content[0].Content[0].Text; got != "[output (2 lines) shown in working file pkg/a.py]" {
		t.Errorf("reference %q", got)
	}
	hist, files = m.apply(h, 2000)
	if len(files) != 2 || files[1].Path != "pkg/b.py (lines 10,12)" || files[0].Refreshed != 2000 ||
		!strings.Contains(files[0].Content, "[edited after this view by `sed -i") {
		t.Errorf("after edit: %+v", files)
	}
	if got := hist[8].Content[0].Content[0].Text; !strings.Contains(got, "pkg/a.py:1:def f():") {
		t.Errorf("a grep result must stay in the history: %q", got)
	}
	if h[2].Content[0].Content[0].Text == hist[2].Content[0].Content[0].Text {
		t.Error("the input history was modified")
	}
	// Deterministic on a real trajectory.
	tr, err := trajectory.Load(shared.Path(t, "data/trajectories/mini-swe-agent/train/astropy__astropy-12907.traj.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Derive(tr, Managed)
	b, _ := Derive(tr, Managed)
	if !reflect.DeepEqual(a, b) {
		t.Error("two derivations differ")
	}
	last := a.Calls[len(a.Calls)-1].Context
	if len(last.Files) == 0 {
		t.Error("no working files derived from a real trajectory")
	}
}

// BenchmarkRun reports the bench's throughput: requests simulated per second
// over the 60 train trajectories × 5 layouts (managed scenario).
func BenchmarkRun(b *testing.B) {
	ss, err := LoadDir(shared.Path(b, "data/trajectories/mini-swe-agent/train"), Managed)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		rep, err := Run(ss, Managed, Options{Provider: "anthropic", Layouts: allLayouts})
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range rep.Layouts {
			n += l.Requests
		}
	}
	b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "requests/s")
}
