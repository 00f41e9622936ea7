package benchcache

import (
	"encoding/json"
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

// On every train trajectory and both scenarios, under the Anthropic
// simulator: no layout costs less than the oracle (it is a lower bound per
// trajectory), and cachefit is within 3% of it and cheaper than every
// layout taken from another system's design (docs/).
func TestTrainOracleBoundAndCachefit(t *testing.T) {
	dir := shared.Path(t, "data/trajectories/mini-swe-agent/train")
	for _, sc := range []Scenario{Append, Managed} {
		ss, err := LoadDir(dir, sc)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(ss, sc, Options{Provider: "anthropic", Layouts: allLayouts})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Trajectories != 60 || rep.Observed == nil || rep.Observed.Requests != rep.Oracle.Requests {
			t.Fatalf("%s: %d trajectories, observed %+v", sc, rep.Trajectories, rep.Observed)
		}
		for _, d := range rep.Details {
			for l, x := range d.Layouts {
				if x.CostUSD < d.Oracle.CostUSD*(1-1e-9) {
					t.Errorf("%s %s: layout %s costs %.6f, below the oracle %.6f", sc, d.Name, l, x.CostUSD, d.Oracle.CostUSD)
				}
			}
		}
		cf := rep.Layouts["cachefit"].CostUSD
		for _, r := range rep.Ratios() {
			t.Logf("%s %-8s %.3f× oracle, hit %.3f, $%.2f", sc, r.Layout, r.Ratio, rep.Layouts[r.Layout].HitRatio, rep.Layouts[r.Layout].CostUSD)
			if r.Layout != "cachefit" && rep.Layouts[r.Layout].CostUSD <= cf {
				t.Errorf("%s: %s ($%.2f) is not dearer than cachefit ($%.2f)", sc, r.Layout, rep.Layouts[r.Layout].CostUSD, cf)
			}
		}
		if ratio := cf / rep.Oracle.CostUSD; ratio > 1.03 {
			t.Errorf("%s: cachefit is %.3f× the oracle; goal ≤ 1.03", sc, ratio)
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
