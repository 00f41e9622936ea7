package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/internal/shared"
)

// `render --explain` shows the panels layout's per-panel cache tracking
// (docs/panels.md, "cache cost tracking"): each panel's span says hit or
// miss and its cost at the model's prices; a fresh render has no previous
// request, so every panel misses.
func TestRenderExplainShowsPanelCacheCost(t *testing.T) {
	proj := shared.Path(t, "data/agents/projects/johnmbergman__kiro-agents")
	r := runCLI(t, proj, nil, "render", "--layout", "panels", "--agent", ".kiro/agents/researcher.json",
		"--model", "claude-sonnet-4-5", "--explain", "what is new?")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	m := regexp.MustCompile(`panel P4 Tools\s+mixed\s+(\d+)\s+miss \$([0-9.]+) \(loop \$([0-9.]+)\)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("the Tools panel's line shows no miss with a cost:\n%s", r.stdout)
	}
	price, _ := cachesim.Lookup("claude-sonnet-4-5")
	tokens, _ := strconv.Atoi(m[1])
	if want := fmt.Sprintf("%.6f", float64(tokens)*price.Input/1e6); m[2] != want || m[3] != want {
		t.Errorf("Tools panel: %s tokens cost $%s (loop $%s); want $%s at the input price", m[1], m[2], m[3], want)
	}
	if strings.Contains(r.stdout, " hit $") {
		t.Errorf("a fresh render has no previous request to hit:\n%s", r.stdout)
	}
}
