package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/internal/shared"
)

// Provider names are the same for every command: run and render take
// "openai" for openai-chat, bench and replay take openai-chat and
// openai-responses for their openai cache-simulator family; an unknown name
// is a usage error listing the valid ones.
func TestProviderNamesAcrossCommands(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, dir, nil, "render", "--provider", "openai", "hi")
	var body map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &body); r.code != 0 || err != nil || body["messages"] == nil ||
		!strings.Contains(r.stderr, "provider openai-chat") {
		t.Errorf("render --provider openai: exit %d, %v, want a Chat Completions body:\n%.200s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if r := runCLI(t, dir, nil, "run", "--provider", "openai", "hi"); r.code != 2 || !strings.Contains(r.stderr, "OPENAI_API_KEY") {
		t.Errorf("run --provider openai without a key: exit %d, %s; want exit 2 naming OPENAI_API_KEY", r.code, r.stderr)
	}

	traj := shared.Path(t, "data/trajectories/mini-swe-agent/train/astropy__astropy-12907.traj.json")
	one := t.TempDir()
	if err := os.Symlink(traj, filepath.Join(one, filepath.Base(traj))); err != nil {
		t.Fatal(err)
	}
	var replays, benches []string
	for _, p := range []string{"openai", "openai-chat", "openai-responses"} {
		r := runCLI(t, dir, nil, "replay", "--trajectory", traj, "--provider", p, "--format", "json")
		if r.code != 0 || !strings.Contains(r.stdout, `"provider": "openai"`) {
			t.Errorf("replay --provider %s: exit %d: %s", p, r.code, r.stderr)
		}
		replays = append(replays, r.stdout)
		r = runCLI(t, dir, nil, "bench", "cache", "--trajectories", one, "--provider", p, "--format", "json")
		var rep struct{ Provider, Model string }
		if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.Provider != "openai" || rep.Model != "gpt-5" {
			t.Errorf("bench cache --provider %s: exit %d, %v, %+v: %s", p, r.code, err, rep, r.stderr)
		}
		benches = append(benches, r.stdout)
	}
	if replays[0] != replays[1] || replays[0] != replays[2] || benches[0] != benches[1] || benches[0] != benches[2] {
		t.Error("openai, openai-chat and openai-responses price differently")
	}

	for _, args := range [][]string{
		{"render", "--provider", "nope", "hi"},
		{"run", "--provider", "nope", "hi"},
		{"replay", "--trajectory", traj, "--provider", "nope"},
		{"bench", "cache", "--trajectories", one, "--provider", "nope"},
	} {
		r := runCLI(t, dir, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, `"nope"`) || !strings.Contains(r.stderr, "openai-chat") ||
			!strings.Contains(r.stderr, "openai") || !strings.Contains(r.stderr, "anthropic") {
			t.Errorf("%v: exit %d, stderr %s; want exit 2 listing the valid names", args[:2], r.code, r.stderr)
		}
	}
}

// bench cache checks --model and --report before it loads or prices
// anything: an unpriced model lists the priced ones, an unwritable report
// path names the flag; a later failure never leaves a report behind.
func TestBenchChecksFlagsBeforeTheRun(t *testing.T) {
	train := shared.Path(t, "data/trajectories/mini-swe-agent/train")
	dir := t.TempDir()
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--model", "gpt-99"}, []string{`"gpt-99"`, "gpt-5", "claude-sonnet-4-5", "gemini-2.5-pro", "deepseek-chat"}},
		{[]string{"--report", filepath.Join(dir, "missing", "r.html")}, []string{"--report", filepath.Join(dir, "missing") + " does not exist: create it first"}},
		{[]string{"--report", dir}, []string{"--report", "is a directory"}},
		// The valid lists include "all", which the flags take.
		{[]string{"--provider", "nosuch"}, []string{`unknown --provider "nosuch"`, "deepseek, or all)"}},
		{[]string{"--scenario", "nosuch"}, []string{`unknown --scenario "nosuch"`, "parallel, or all)"}},
	} {
		r := runCLI(t, dir, nil, append([]string{"bench", "cache", "--trajectories", train}, c.args...)...)
		if r.code != 2 || strings.Contains(r.stderr, "pricing") || strings.Contains(r.stderr, "write-check") {
			t.Errorf("%v: exit %d, want 2 before pricing: %s", c.args, r.code, r.stderr)
		}
		for _, w := range c.wants {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr lacks %q: %s", c.args, w, r.stderr)
			}
		}
	}
	if r := runCLI(t, dir, nil, "bench", "cache", "--trajectories", train, "--model", "claude-sonnet-4.5", "--format", "json",
		"--layouts", "flat,nope", "--report", filepath.Join(dir, "r.html")); r.code != 2 {
		t.Errorf("unknown layout: exit %d: %s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed runs left files behind: %v", entries)
	}
}

// render --explain says how tokens were counted: exact only for OpenAI
// models, the cl100k approximation for Claude, an estimate for models whose
// tokenizer is not bundled.
func TestRenderExplainNamesTheCounter(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "openai-chat"}, "o200k_base (exact BPE)"},
		{[]string{"--provider", "anthropic"}, "cl100k_base (approximation"},
		{[]string{"--provider", "gemini"}, "o200k_base (estimate"},
		{[]string{"--provider", "deepseek"}, "o200k_base (estimate"},
		{[]string{"--provider", "bedrock", "--model", "amazon.nova-pro-v1:0"}, "o200k_base (estimate"},
		{[]string{"--provider", "gemini", "--tokens", "estimate"}, "estimate (≈4 bytes/token)"},
	} {
		r := runCLI(t, dir, nil, append(append([]string{"render", "--explain"}, c.args...), "hi")...)
		last := strings.TrimSpace(r.stdout)
		last = last[strings.LastIndex(last, "\n")+1:]
		if r.code != 0 || !strings.Contains(last, "tokens counted by "+c.want) {
			t.Errorf("%v: exit %d, footer %q; want %q", c.args, r.code, last, c.want)
		}
	}
}

// render prints only the JSON body on stdout; the request line on stderr
// shows the endpoint path, where Bedrock and Gemini carry the model.
func TestRenderShowsTheRequestLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		provider string
		line     *regexp.Regexp
	}{
		{"bedrock", regexp.MustCompile(`strata: render: POST /model/us\.anthropic\.claude-sonnet-4-5-20250929-v1%3A0/converse-stream · provider bedrock · model us\.anthropic\.claude-sonnet-4-5-20250929-v1:0`)},
		{"gemini", regexp.MustCompile(`strata: render: POST /v1beta/models/gemini-2\.5-flash:streamGenerateContent\?alt=sse · provider gemini · model gemini-2\.5-flash`)},
		{"anthropic", regexp.MustCompile(`strata: render: POST /v1/messages · provider anthropic · model claude-sonnet-4-5`)},
	} {
		r := runCLI(t, dir, nil, "render", "--provider", c.provider, "hi")
		if r.code != 0 || !json.Valid([]byte(r.stdout)) || !c.line.MatchString(r.stderr) {
			t.Errorf("%s: exit %d, stdout valid JSON %v, stderr %q; want %s", c.provider, r.code, json.Valid([]byte(r.stdout)), r.stderr, c.line)
		}
	}
}

// The README's acpx line works as written: it names the pinned acpx with
// npx -y (no install prompt), and its arguments drive `strata acp` (the
// offline demo) to the end of a turn.
func TestREADMEAcpxLine(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	raw, err := os.ReadFile(shared.Path(t, "peers/package.json"))
	if err != nil || json.Unmarshal(raw, &pkg) != nil {
		t.Fatalf("peers/package.json: %v", err)
	}
	prefix := "npx -y acpx@" + pkg.Dependencies["acpx"] + " "
	var line string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.Contains(l, "acpx@") && strings.HasPrefix(l, "npx") {
			line = l
		}
	}
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok {
		t.Fatalf("README's acpx line %q does not start %q", line, prefix)
	}
	var args []string
	for _, a := range regexp.MustCompile(`"[^"]*"|\S+`).FindAllString(rest, -1) {
		a = strings.Trim(a, `"`)
		if a == "go run ./cmd/strata acp" {
			a = binary + " acp"
		}
		args = append(args, a)
	}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("# demo\n"), 0o644)
	cmd := peers.Command(t, "acpx", args...)
	cmd.Dir = ws
	cmd.Env = append(cmd.Env, "STRATA_DATA_DIR="+t.TempDir(), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"stopReason":"end_turn"`) || !strings.Contains(strings.Join(args, " "), binary+" acp") {
		t.Errorf("acpx %v: %v\n%s", args, err, out)
	}
}
