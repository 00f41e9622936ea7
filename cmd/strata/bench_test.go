package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

// `bench cache` on the train split prints DESIGN.md's JSON shape for both
// scenarios, cachefit cheapest and within 3% of the oracle, and writes a
// self-contained HTML report.
func TestBenchCacheJSON(t *testing.T) {
	dir := shared.Path(t, "data/trajectories/mini-swe-agent/train")
	for _, sc := range []string{"append", "managed"} {
		html := filepath.Join(t.TempDir(), "r.html")
		r := runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir, "--provider", "anthropic",
			"--scenario", sc, "--format", "json", "--report", html)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var rep struct {
			Provider, Scenario string
			Layouts            map[string]map[string]float64
			Oracle             map[string]float64
			Observed           map[string]any
			Trajectories       int
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Provider != "anthropic" || rep.Scenario != sc || rep.Trajectories != 60 || len(rep.Layouts) != 5 || rep.Observed == nil {
			t.Fatalf("report header %+v", rep)
		}
		for l, v := range rep.Layouts {
			for _, k := range []string{"cost_usd", "hit_ratio", "input_tokens", "cache_read_tokens", "cache_write_tokens"} {
				if _, ok := v[k]; !ok {
					t.Errorf("%s: layout %s lacks %s", sc, l, k)
				}
			}
			if l != "cachefit" && v["cost_usd"] <= rep.Layouts["cachefit"]["cost_usd"] {
				t.Errorf("%s: %s not dearer than cachefit", sc, l)
			}
		}
		if q := rep.Layouts["cachefit"]["cost_usd"] / rep.Oracle["cost_usd"]; q > 1.03 || q < 1 {
			t.Errorf("%s: cachefit/oracle = %.3f", sc, q)
		}
		b, err := os.ReadFile(html)
		if err != nil || !strings.Contains(string(b), "<svg") || strings.Contains(string(b), "http://") && !strings.Contains(string(b), "<svg") {
			t.Errorf("html report: %v", err)
		}
		if !strings.Contains(r.stderr, "60/60") {
			t.Errorf("no progress on stderr: %s", r.stderr)
		}
	}
	r := runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir, "--scenario", "sideways")
	if r.code != 2 || !strings.Contains(r.stderr, `"sideways"`) {
		t.Errorf("bad scenario: exit %d %s", r.code, r.stderr)
	}
}

// `replay` re-drives a real trajectory through the loop (recorded replies as
// SSE through the Anthropic SDK, recorded observations from the replay tool)
// and its per-turn pricing adds up to what `bench cache --scenario append`
// computes for the same trajectory and layout: the loop sends exactly the
// recorded history.
func TestReplayMatchesBench(t *testing.T) {
	dir := shared.Path(t, "data/trajectories/mini-swe-agent/train")
	file := filepath.Join(dir, "astropy__astropy-12907.traj.json")
	r := runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir, "--scenario", "append", "--format", "json")
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
		for _, d := range rep.Details {
			if d.Name != "astropy__astropy-12907" {
				continue
			}
			want := d.Layouts[layout].CostUSD
			if len(out.Turns) != d.Calls || out.Total.CostUSD < want*0.9999 || out.Total.CostUSD > want*1.0001 {
				t.Errorf("%s: replay %d turns $%.6f; bench %d calls $%.6f", layout, len(out.Turns), out.Total.CostUSD, d.Calls, want)
			}
		}
	}
}

// `bench assemble` times every layout over real trajectories (two of them
// here, linked into a temp dir) and reports each as a ratio to json.Marshal
// of the same bodies, in the same loop.
func TestBenchAssembleJSON(t *testing.T) {
	train := shared.Path(t, "data/trajectories/mini-swe-agent/train")
	files, _ := filepath.Glob(filepath.Join(train, "*.traj.json"))
	if len(files) < 2 {
		t.Fatalf("train holds %d trajectories", len(files))
	}
	dir := t.TempDir()
	for _, f := range files[:2] {
		if err := os.Symlink(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
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
