package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
)

// trainLinks links the first n train trajectories into a temp dir.
func trainLinks(t *testing.T, n int) string {
	t.Helper()
	train := shared.Path(t, "data/trajectories/mini-swe-agent/train")
	files, _ := filepath.Glob(filepath.Join(train, "*.traj.json"))
	if len(files) < n {
		t.Fatalf("train holds %d trajectories", len(files))
	}
	dir := t.TempDir()
	for _, f := range files[:n] {
		if err := os.Symlink(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type benchJSON struct {
	Provider, Scenario string
	Layouts            map[string]map[string]float64
	Groups             map[string]string `json:"layout_groups"`
	Oracle             map[string]float64
	Observed           map[string]any
	Trajectories       int
	Agent              string
	Pacing             map[string]any
	Parallel           int
}

// `bench cache` on train sessions prints DESIGN.md's JSON shape for each
// scenario, every registered layout by default (grouped), cachefit cheapest
// and within 2% of the oracle, prompt tokens per call, and writes a
// self-contained HTML report.
func TestBenchCacheJSON(t *testing.T) {
	dir := trainLinks(t, 6)
	for _, sc := range []string{"append", "managed", "parallel"} {
		html := filepath.Join(t.TempDir(), "r.html")
		r := runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir, "--provider", "anthropic",
			"--scenario", sc, "--format", "json", "--report", html)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var rep benchJSON
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Provider != "anthropic" || rep.Scenario != sc || rep.Trajectories != 6 || len(rep.Layouts) < 5 ||
			(rep.Observed == nil) != (sc == "parallel") || rep.Groups["cachefit"] != "strata" || rep.Groups["flat"] != "seeds" {
			t.Fatalf("report header %+v", rep)
		}
		for l, v := range rep.Layouts {
			for _, k := range []string{"cost_usd", "hit_ratio", "input_tokens", "cache_read_tokens", "cache_write_tokens", "prompt_tokens_per_call"} {
				if _, ok := v[k]; !ok {
					t.Errorf("%s: layout %s lacks %s", sc, l, k)
				}
			}
			if l != "cachefit" && v["cost_usd"] < rep.Layouts["cachefit"]["cost_usd"] {
				t.Errorf("%s: %s cheaper than cachefit", sc, l)
			}
		}
		if q := rep.Layouts["cachefit"]["cost_usd"] / rep.Oracle["cost_usd"]; q > 1.02 || q < 1 {
			t.Errorf("%s: cachefit/oracle = %.3f", sc, q)
		}
		b, err := os.ReadFile(html)
		if err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "prompt tokens / call") {
			t.Errorf("html report: %v", err)
		}
		if !strings.Contains(r.stderr, "6/6") {
			t.Errorf("no progress on stderr: %s", r.stderr)
		}
	}
	for _, bad := range [][]string{
		{"--scenario", "sideways"}, {"--pause-every", "-1"}, {"--parallel", "1"}, {"--provider", "all", "--model", "gpt-5"},
		{"--agent", "/nonexistent.json"}, {"--read-step", "-1"},
	} {
		r := runCLI(t, t.TempDir(), nil, append([]string{"bench", "cache", "--trajectories", dir}, bad...)...)
		if r.code != 2 || !strings.Contains(r.stderr, strings.TrimPrefix(bad[len(bad)-1], "/")) {
			t.Errorf("%v: exit %d %s", bad, r.code, r.stderr)
		}
	}
}

// `--scenario all --provider all` prices every scenario under the four
// simulators in one run (a JSON array of 16 reports); the paced reports
// carry their pacing, --agent its name, and the table groups the rows.
func TestBenchCacheAllInOneRun(t *testing.T) {
	dir := trainLinks(t, 2)
	agent := shared.Path(t, "data/agents/projects/johnmbergman__kiro-agents/.kiro/agents/researcher.json")
	r := runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir, "--scenario", "all", "--provider", "all",
		"--layouts", "flat,cachefit", "--agent", agent, "--pause-every", "3", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var reps []benchJSON
	if err := json.Unmarshal([]byte(r.stdout), &reps); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, rep := range reps {
		seen[rep.Scenario+"/"+rep.Provider] = true
		if rep.Agent != "researcher" || len(rep.Layouts) != 2 {
			t.Errorf("%s/%s: agent %q, %d layouts", rep.Scenario, rep.Provider, rep.Agent, len(rep.Layouts))
		}
		if (rep.Pacing != nil) != (rep.Scenario == "paced") || rep.Scenario == "paced" && rep.Pacing["Every"] != 3.0 {
			t.Errorf("%s: pacing %v", rep.Scenario, rep.Pacing)
		}
	}
	if len(reps) != 16 || len(seen) != 16 {
		t.Errorf("%d reports, %d distinct", len(reps), len(seen))
	}
	r = runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir, "--scenario", "paced", "--layouts", "flat,cachefit")
	if r.code != 0 || !regexp.MustCompile(`(?m)^\s+seeds\s+flat`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^\s+strata\s+cachefit`).MatchString(r.stdout) || !strings.Contains(r.stdout, "prompt/call") ||
		!strings.Contains(r.stdout, "a 6m0s pause after every 10 calls") {
		t.Errorf("table: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// `replay` re-drives a real trajectory through the loop (recorded replies as
// SSE through the Anthropic SDK, recorded observations from the replay tool)
// and its per-turn pricing adds up to what `bench cache --scenario append`
// computes for the same trajectory and layout: the loop sends exactly the
// recorded history.
func TestReplayMatchesBench(t *testing.T) {
	file := filepath.Join(shared.Path(t, "data/trajectories/mini-swe-agent/train"), "astropy__astropy-12907.traj.json")
	// The bench prices each trajectory on its own: this one alone is enough
	// (all 60 took minutes and, on a loaded machine, pushed the package
	// past go test's 10-minute default timeout).
	dir := t.TempDir()
	if err := os.Symlink(file, filepath.Join(dir, filepath.Base(file))); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir, "--scenario", "append", "--layouts", "flat,tiered,cachefit", "--format", "json")
	var rep struct {
		Details []struct {
			Name    string
			Calls   int
			Layouts map[string]struct {
				CostUSD float64 `json:"cost_usd"`
			}
		} `json:"per_trajectory"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, layout := range []string{"flat", "tiered", "cachefit"} {
		r := runCLI(t, t.TempDir(), nil, "replay", "--trajectory", file, "--layout", layout, "--format", "json")
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", layout, r.code, r.stderr)
		}
		var out struct {
			Turns []struct {
				CacheRead int64 `json:"cache_read_tokens"`
			}
			Total struct {
				CostUSD float64 `json:"cost_usd"`
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range rep.Details {
			if d.Name != "astropy__astropy-12907" {
				continue
			}
			found = true
			want := d.Layouts[layout].CostUSD
			if len(out.Turns) != d.Calls || out.Total.CostUSD < want*0.9999 || out.Total.CostUSD > want*1.0001 {
				t.Errorf("%s: replay %d turns $%.6f; bench %d calls $%.6f", layout, len(out.Turns), out.Total.CostUSD, d.Calls, want)
			}
		}
		if !found {
			t.Errorf("%s: bench cache priced no astropy__astropy-12907", layout)
		}
	}
}

// `bench assemble` times every layout over real trajectories (two of them
// here, linked into a temp dir) and reports each as a ratio to json.Marshal
// of the same bodies, in the same loop.
func TestBenchAssembleJSON(t *testing.T) {
	dir := trainLinks(t, 2)
	r := runCLI(t, t.TempDir(), nil, "bench", "assemble", "--trajectories", dir, "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res []struct {
		Layout    string
		Requests  int
		BodyBytes int64   `json:"body_bytes"`
		Ratio     float64 `json:"x_marshal"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range res {
		names = append(names, x.Layout)
		if x.Requests == 0 || x.Requests != res[0].Requests || x.BodyBytes == 0 || x.Ratio <= 0 {
			t.Errorf("%+v", x)
		}
	}
	if strings.Join(names, ",") != "flat,kiro,panels,tiered,cachefit" {
		t.Errorf("layouts %v", names)
	}
}

// Bench progress gives the run's overall position and the time left, not
// only the current step's (the issue: a 22-minute bench said "12/60" per
// step with no idea of the whole): step 2 of 4 half done after 30 s is 37 %
// of the run, with 50 s left.
func TestBenchProgressGivesOverallPosition(t *testing.T) {
	var b strings.Builder
	all := &benchProgress{start: time.Now().Add(-30 * time.Second), step: 1, steps: 4}
	progressBar(&b, "[2/4] pricing append/openai", all)(5, 10)
	if got := b.String(); got != "[2/4] pricing append/openai: 5/10 (50%) · overall 37% · ~50s left\n" {
		t.Errorf("progress line %q", got)
	}
}
