package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// writeConfig writes a config file and returns the STRATA_CONFIG setting.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The config file sets defaults for run/render; an environment variable
// beats the file and a flag beats both; 'strata config' shows each value
// with where it came from (file:line, env, flag, default).
func TestConfigFileDefaultsAndPrecedence(t *testing.T) {
	cfg := writeConfig(t, "# my defaults\nprovider: openai\nlayout: kiro\nmodel: gpt-4.1\nmax_turns: 7\nbase_urls:\n  anthropic: http://127.0.0.1:9/from-file\n")
	env := []string{"STRATA_CONFIG=" + cfg}
	ws := t.TempDir()

	r := runCLI(t, ws, env, "render", "--explain", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "layout kiro ·") {
		t.Errorf("render --explain with the file's layout: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, ws, env, "render", "hi")
	if r.code != 0 || !strings.Contains(r.stderr, "provider openai-chat · model gpt-4.1") {
		t.Errorf("render with the file's provider and model: exit %d\n%s", r.code, r.stderr)
	}
	// A provider chosen above the file does not take the file's model of
	// another family (gpt-4.1 is OpenAI's); a model of its own family does.
	r = runCLI(t, ws, env, "render", "--provider", "anthropic", "hi")
	if r.code != 0 || !strings.Contains(r.stderr, "provider anthropic · model claude-") ||
		!strings.Contains(r.stderr, "model gpt-4.1 (from "+cfg+":4) is not used: it is a model of openai and the provider is anthropic (from flag --provider)") {
		t.Errorf("--provider anthropic over the file's openai model: exit %d\n%s", r.code, r.stderr)
	}
	r = runCLI(t, ws, append(env, "STRATA_PROVIDER=bedrock", "STRATA_MODEL=claude-haiku-4-5"), "render", "hi")
	if r.code != 0 || strings.Contains(r.stderr, "is not used") || !strings.Contains(r.stderr, "model claude-haiku-4-5") {
		t.Errorf("bedrock with a Claude model from the environment: exit %d\n%s", r.code, r.stderr)
	}
	r = runCLI(t, ws, append(env, "STRATA_LAYOUT=panels"), "render", "--explain", "hi")
	if !strings.Contains(r.stdout, "layout panels ·") {
		t.Errorf("STRATA_LAYOUT did not beat the file:\n%s", r.stdout)
	}
	r = runCLI(t, ws, append(env, "STRATA_LAYOUT=panels"), "render", "--explain", "--layout", "flat", "hi")
	if !strings.Contains(r.stdout, "layout flat ·") {
		t.Errorf("--layout did not beat env and file:\n%s", r.stdout)
	}

	r = runCLI(t, ws, append(env, "STRATA_MODEL=gpt-5"), "config", "--approve", "all", "--format", "json")
	if r.code != 0 {
		t.Fatalf("config: exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		File     string
		Settings []origin
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	from := map[string]string{}
	for _, o := range got.Settings {
		from[o.Key] = o.Value + " @ " + o.Source
	}
	for key, want := range map[string]string{
		"provider":              "openai @ " + cfg + ":2",
		"layout":                "kiro @ " + cfg + ":3",
		"model":                 "gpt-5 @ env STRATA_MODEL",
		"max_turns":             "7 @ " + cfg + ":5",
		"approve":               "all @ flag --approve",
		"max_tokens":            "0 @ default",
		"base_urls.anthropic":   "http://127.0.0.1:9/from-file @ " + cfg + ":7",
		"base_urls.openai-chat": "(the SDK's default) @ default",
		// openai-compatible has no default to fall back on.
		"base_urls.openai-compatible": "(none: set OPENAI_BASE_URL) @ default",
	} {
		if from[key] != want {
			t.Errorf("%s = %q, want %q", key, from[key], want)
		}
	}
	if got.File != cfg {
		t.Errorf("file = %q, want %q", got.File, cfg)
	}
	r = runCLI(t, ws, env, "config")
	if !strings.Contains(r.stdout, "config file: "+cfg+" (read)") || !strings.Contains(r.stdout, "layout  ") {
		t.Errorf("config table:\n%s", r.stdout)
	}
	// Where to look when something goes wrong: the log file and the
	// session database in effect (the README's ~/.cache path is only the
	// default; XDG_STATE_HOME or STRATA_LOG_FILE move it).
	state := t.TempDir()
	r = runCLI(t, ws, append(env, "STRATA_LOG_FILE=", "XDG_STATE_HOME="+state, "STRATA_DATA_DIR="+state), "config")
	for _, want := range []string{"log file: " + filepath.Join(state, "strata", "strata.log"), "session database: " + filepath.Join(state, "strata.db")} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("config table lacks %q:\n%s", want, r.stdout)
		}
	}
}

// base_urls in the file point the provider at another server unless the
// provider's own variable is set.
func TestConfigFileBaseURL(t *testing.T) {
	m, err := replay.AnthropicStream("m1", llm.Usage{Input: 5, Output: 2}, llm.StopEndTurn, llm.TextBlock("from the configured server"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer(m)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := writeConfig(t, "provider: anthropic\nbase_urls:\n  anthropic: "+srv.URL()+"\n")
	r := runCLI(t, t.TempDir(), []string{"STRATA_CONFIG=" + cfg, "ANTHROPIC_API_KEY=test"}, "run", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "from the configured server") || len(srv.Received()) != 1 {
		t.Errorf("run with base_urls.anthropic: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, t.TempDir(), []string{"STRATA_CONFIG=" + cfg, "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=http://127.0.0.1:1"},
		"run", "--request-timeout", "5s", "hi")
	if r.code == 0 || len(srv.Received()) != 1 {
		t.Errorf("ANTHROPIC_BASE_URL did not beat the file: exit %d, %d requests at the file's server", r.code, len(srv.Received()))
	}
}

// A bad config file fails run (exit 2) with FILE:LINE, the key and what is
// wanted; a missing file is no error.
func TestBadConfigFile(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unknown key", "provider: anthropic\nmodle: x\n", `:2: modle: unknown key (did you mean "model"? valid: provider, model, layout`},
		{"unknown key far from any", "colour: red\n", ":1: colour: unknown key (valid: provider"},
		{"not a number", "max_turns: many\n", ":1: max_turns: want a whole number ≥ 0, got \"many\""},
		{"bad duration", "\n\nrequest_timeout: soon\n", ":3: request_timeout: want a duration such as 90s"},
		{"unknown layout", "layout: fancy\n", `:1: layout: unknown layout "fancy" (valid: `},
		{"unknown provider", "provider: acme\n", `:1: provider: unknown provider "acme" (valid: `},
		{"bad approval", "approve: maybe\n", `:1: approve: "maybe" (valid: ask, allowlist, all)`},
		{"list for a value", "model:\n  - a\n", ":2: model: want a single value, not a list"},
		{"bad base url", "base_urls:\n  anthropic: localhost\n", `:2: base_urls.anthropic: want a URL such as http://127.0.0.1:8080, got "localhost"`},
		{"unknown base url provider", "base_urls:\n  acme: http://x\n", `:2: base_urls.acme: unknown provider "acme"`},
		{"yaml syntax", "layout: [kiro\n", ":1: not valid YAML: "},
		{"not a mapping", "- layout\n", ":1: want a mapping of settings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeConfig(t, tc.body)
			r := runCLI(t, t.TempDir(), []string{"STRATA_CONFIG=" + cfg}, "run", "hi")
			if r.code != 2 || !strings.Contains(r.stderr, "strata: "+cfg+tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant 2 and %q", r.code, r.stderr, cfg+tc.want)
			}
		})
	}
	r := runCLI(t, t.TempDir(), []string{"STRATA_CONFIG=" + filepath.Join(t.TempDir(), "absent.yaml")}, "config")
	if r.code != 0 || !strings.Contains(r.stdout, "not found; built-in defaults apply") {
		t.Errorf("missing config file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, t.TempDir(), []string{"STRATA_LAYOUT=fancy"}, "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `STRATA_LAYOUT=fancy: unknown layout "fancy"`) {
		t.Errorf("bad STRATA_LAYOUT: exit %d %s", r.code, r.stderr)
	}
}

// The config file applies wherever its settings' flags exist: sessions
// resume and branch (model, max_tokens), bench cache (provider, model) and
// replay (provider, layout). bench cache and replay skip, with a warning,
// a provider or model they cannot price; 'strata config' lists where each
// setting applies.
func TestConfigFileAppliesToEveryCommandWithTheFlag(t *testing.T) {
	srv := doneServer(t, 3)
	ws := t.TempDir()
	key := []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL(), "STRATA_DATA_DIR=" + t.TempDir()}
	r := runCLI(t, ws, key, "run", "hi")
	m := sessionLine.FindStringSubmatch(r.stderr)
	if r.code != 0 || m == nil {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	cfg := writeConfig(t, "provider: anthropic\nmodel: claude-opus-4-1\nmax_tokens: 77\n")
	withCfg := append(key, "STRATA_CONFIG="+cfg)
	for i, args := range [][]string{{"sessions", "resume", m[1], "more"}, {"sessions", "branch", m[1], "--turn", "0", "other"}} {
		r := runCLI(t, ws, withCfg, args...)
		if r.code != 0 || len(srv.Received()) != i+2 {
			t.Fatalf("%v: exit %d, %d requests\n%s", args, r.code, len(srv.Received()), r.stderr)
		}
		body := string(srv.Received()[i+1].Body)
		if !strings.Contains(body, `"model":"claude-opus-4-1"`) || !strings.Contains(body, `"max_tokens":77`) {
			t.Errorf("%v did not take model and max_tokens from the file: %.300s", args, body)
		}
	}

	dir := trainLinks(t, 1)
	bench := func(env []string, extra ...string) (benchJSON, string) {
		t.Helper()
		args := append([]string{"bench", "cache", "--trajectories", dir, "--scenario", "append", "--layouts", "flat", "--format", "json"}, extra...)
		r := runCLI(t, t.TempDir(), env, args...)
		var rep benchJSON
		if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil {
			t.Fatalf("%v: exit %d %v\n%s", args, r.code, err, r.stderr)
		}
		return rep, r.stderr + r.stdout
	}
	gemini := writeConfig(t, "provider: gemini\nmodel: gemini-2.5-pro\nlayout: kiro\n")
	if rep, out := bench([]string{"STRATA_CONFIG=" + gemini}); rep.Provider != "gemini" || !strings.Contains(out, `"model": "gemini-2.5-pro"`) {
		t.Errorf("bench cache with the file's provider and model: provider %q\n%.400s", rep.Provider, out)
	}
	if rep, out := bench([]string{"STRATA_CONFIG=" + gemini}, "--provider", "openai"); rep.Provider != "openai" ||
		!strings.Contains(out, "model gemini-2.5-pro (from "+gemini+":2) is not used by 'strata bench cache': it is a gemini model and the simulator is openai") {
		t.Errorf("bench cache --provider openai with a gemini model in the file: provider %q\n%.600s", rep.Provider, out)
	}
	ollama := writeConfig(t, "provider: ollama\n")
	if rep, out := bench([]string{"STRATA_CONFIG=" + ollama}); rep.Provider != "anthropic" ||
		!strings.Contains(out, "provider ollama (from "+ollama+":1) is not used by 'strata bench cache': it has no cache simulator") {
		t.Errorf("bench cache with a provider it cannot simulate: provider %q\n%.600s", rep.Provider, out)
	}

	traj, _ := filepath.Glob(filepath.Join(dir, "*.traj.json"))
	r = runCLI(t, t.TempDir(), []string{"STRATA_CONFIG=" + gemini}, "replay", "--trajectory", traj[0])
	if r.code != 0 || !strings.Contains(r.stdout, "layout kiro · gemini cache rules") {
		t.Errorf("replay with the file's layout and provider: exit %d\n%.300s\n%s", r.code, r.stdout, r.stderr)
	}

	r = runCLI(t, t.TempDir(), []string{"STRATA_CONFIG=" + gemini}, "config")
	for _, want := range []string{"  provider: strata, acp, bench cache, chat, render, replay, run, sessions branch, sessions resume, worker, workflow resume, workflow run\n",
		"  layout: strata, acp, chat, render, replay, run, sessions branch, sessions resume, worker, workflow resume, workflow run\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("config does not say where settings apply (%q):\n%s", want, r.stdout)
		}
	}
}
