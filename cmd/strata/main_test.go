package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/internal/strays"
	"github.com/strata-agent/strata/llm/replay"
)

var binary, dataDir, configDir string

// TestMain builds the strata binary once; the tests run it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strata-cli")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "strata")
	dataDir = filepath.Join(dir, "data")     // session database of every run, unless a test sets STRATA_DATA_DIR
	configDir = filepath.Join(dir, "config") // XDG_CONFIG_HOME (trust decisions) of every run, unless a test sets it
	// Every strata the tests start inherits these: never the user's own
	// log file or config file.
	os.Setenv("STRATA_LOG_FILE", filepath.Join(dir, "strata.log"))
	os.Setenv("STRATA_CONFIG", filepath.Join(dir, "no-config.yaml"))
	for _, k := range []string{"STRATA_PROVIDER", "STRATA_MODEL", "STRATA_LAYOUT", "STRATA_APPROVE", "STRATA_STORE"} {
		os.Unsetenv(k)
	}
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := strays.Run(m) // and fails when the tests leave files here (a binary run in the package directory)
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs the binary in dir with a clean provider environment plus env;
// standard input is empty (/dev/null).
func runCLI(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	return runCLIInput(t, dir, env, nil, args...)
}

// runCLIInput is runCLI with stdin as standard input (nil = /dev/null).
func runCLIInput(t *testing.T, dir string, env []string, stdin io.Reader, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Stdin, cmd.Env = dir, stdin, cliEnv(env)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{so.String(), se.String(), code}
}

// cliEnv is the environment of a strata the tests start: this process's
// without provider keys and base URLs, the tests' data and config folders,
// then env.
func cliEnv(env []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "STRATA_DATA_DIR="+dataDir, "XDG_CONFIG_HOME="+configDir)
	return append(out, env...)
}

// Offline, `strata run` plays the embedded demo and really runs the tools in
// the current directory.
func TestRunOfflineDemoExecutesTools(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes-7f3a.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Project Quokka\n"), 0o644)
	r := runCLI(t, dir, nil, "run", "what is in this directory?")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "OFFLINE REPLAY") || !strings.Contains(r.stderr, "ANTHROPIC_API_KEY") {
		t.Errorf("stderr does not say it is an offline replay: %s", r.stderr)
	}
	for _, want := range []string{"⏺ glob", "notes-7f3a.txt", "⏺ fs_read", "Project Quokka", "only these words are a recording"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

// With --format json and a real recorded Anthropic stream served on
// 127.0.0.1, the events carry the fixture's text and usage incl. cache tokens.
func TestRunJSONAgainstRecordedFixture(t *testing.T) {
	fixture := shared.Path(t, "data/wire/vercel-ai/anthropic/anthropic-code-execution-20260120-prompt-cache.1.chunks.txt")
	rs, err := replay.ChunksFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer(rs...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := runCLI(t, t.TempDir(), []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL()},
		"run", "--format", "json", "--model", "claude-sonnet-4-5", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	// The expected text and usage, read straight from the fixture.
	var wantText strings.Builder
	var wantRead, wantWrite float64
	raw, _ := os.ReadFile(fixture)
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var ev map[string]any
		json.Unmarshal([]byte(line), &ev)
		if ev["type"] == "content_block_delta" {
			if d := ev["delta"].(map[string]any); d["type"] == "text_delta" {
				wantText.WriteString(d["text"].(string))
			}
		}
		// message_start carries the first usage; a message_delta's usage is
		// cumulative and, where it has cache fields, supersedes it
		// (Anthropic streaming docs).
		var u map[string]any
		switch ev["type"] {
		case "message_start":
			u, _ = ev["message"].(map[string]any)["usage"].(map[string]any)
		case "message_delta":
			u, _ = ev["usage"].(map[string]any)
		}
		if v, ok := u["cache_read_input_tokens"].(float64); ok {
			wantRead = v
		}
		if v, ok := u["cache_creation_input_tokens"].(float64); ok {
			wantWrite = v
		}
	}
	var gotText strings.Builder
	var end map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		if ev["kind"] == "message_update" {
			if d := ev["delta"].(map[string]any); d["type"] == "text" {
				gotText.WriteString(d["text"].(string))
			}
		}
		if ev["kind"] == "session_turn_end" {
			end = ev
		}
	}
	if gotText.String() != wantText.String() || wantText.Len() == 0 {
		t.Errorf("streamed text %q, fixture text %q", gotText.String(), wantText.String())
	}
	if end == nil {
		t.Fatal("no session_turn_end event")
	}
	u := end["usage"].(map[string]any)
	if u["cache_read"] != wantRead || u["cache_write"] != wantWrite || wantRead == 0 {
		t.Errorf("usage %v; fixture cache read %v write %v", u, wantRead, wantWrite)
	}
}

// Bad input exits 2 and names the bad value and the valid ones; provider HTTP
// errors exit 1 with status, type and message.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args  []string
		env   []string
		code  int
		wants []string
	}{
		{[]string{"run", "--provider", "nope", "hi"}, nil, 2, []string{`"nope"`, "anthropic", "openai-chat"}},
		{[]string{"run", "--layout", "nope", "hi"}, nil, 2, []string{`"nope"`, "flat"}},
		{[]string{"run", "--bogus", "hi"}, nil, 2, []string{"bogus"}},
		{[]string{"run", "--provider", "anthropic", "hi"}, nil, 2, []string{"ANTHROPIC_API_KEY"}},
		{[]string{"run", "--provider", "openai-responses", "hi"}, nil, 2, []string{"OPENAI_API_KEY"}},
		{[]string{"render", "--provider", "gemini-x", "hi"}, nil, 2, []string{`"gemini-x"`}},
	} {
		r := runCLI(t, dir, tc.env, tc.args...)
		if r.code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %s)", tc.args, r.code, tc.code, r.stderr)
		}
		for _, w := range tc.wants {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr lacks %q: %s", tc.args, w, r.stderr)
			}
		}
	}
	srv, _ := replay.NewServer(replay.Response{Status: 401,
		Header: map[string][]string{"Request-Id": {"req_test_401"}},
		Body:   []byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)})
	defer srv.Close()
	r := runCLI(t, dir, []string{"ANTHROPIC_API_KEY=bad", "ANTHROPIC_BASE_URL=" + srv.URL()}, "run", "hi")
	if r.code != 1 {
		t.Errorf("HTTP 401: exit %d, want 1", r.code)
	}
	for _, w := range []string{"401", "authentication_error", "invalid x-api-key", "req_test_401"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("HTTP 401: stderr lacks %q: %s", w, r.stderr)
		}
	}
}

// render prints the body the SDK would send; it is valid JSON holding the
// prompt and the built-in tools, in each provider's shape.
func TestRenderPrintsWireBody(t *testing.T) {
	for _, tc := range []struct{ provider, want string }{
		{"anthropic", `"input_schema"`},
		{"openai-chat", `"function"`},
		{"openai-responses", `"input"`},
	} {
		r := runCLI(t, t.TempDir(), nil, "render", "--provider", tc.provider, "what is here?")
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.provider, r.code, r.stderr)
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &body); err != nil {
			t.Fatalf("%s: body is not JSON: %v\n%s", tc.provider, err, r.stdout)
		}
		if !strings.Contains(r.stdout, "what is here?") || !strings.Contains(r.stdout, tc.want) || !strings.Contains(r.stdout, "fs_read") {
			t.Errorf("%s: body lacks prompt, %s or tools:\n%s", tc.provider, tc.want, r.stdout)
		}
	}
	// Breakpoints reach the wire only for Anthropic and Bedrock; the table
	// says so for the automatic caches.
	for provider, want := range map[string]string{"anthropic": "◆ breakpoint", "gemini": "not sent: gemini caches prefixes automatically",
		"openai-chat": "not sent: openai-chat caches prefixes automatically"} {
		r := runCLI(t, t.TempDir(), nil, "render", "--explain", "--tokens", "estimate", "--provider", provider, "hi")
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("render --explain --provider %s: exit %d, want %q in:\n%s", provider, r.code, want, r.stdout)
		}
	}
	// The layer table's flags without --explain would be silently ignored.
	for _, flag := range [][]string{{"--format", "json"}, {"--tokens", "estimate"}} {
		r := runCLI(t, t.TempDir(), nil, append([]string{"render"}, append(flag, "hi")...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "--explain") || r.stdout != "" {
			t.Errorf("render %v without --explain: exit %d, stdout %q, stderr %q; want exit 2 naming --explain", flag, r.code, r.stdout, r.stderr)
		}
	}
	r := runCLI(t, t.TempDir(), nil, "render", "--explain", "--format", "json", "hi")
	var bd struct {
		Layers []struct {
			Name   string `json:"name"`
			Tokens int    `json:"tokens"`
		} `json:"layers"`
		Total int `json:"total_tokens"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &bd); err != nil || len(bd.Layers) == 0 || bd.Total == 0 {
		t.Errorf("explain json: %v %s", err, r.stdout)
	}
}

// `strata run --replay` with a real Bedrock ConverseStream recording (AWS
// event-stream bytes) goes through the AWS SDK: the reasoning, text and the
// stream's metadata usage come out as events.
func TestRunReplaysBedrockEventStream(t *testing.T) {
	fixture := shared.Path(t, "data/wire/pydantic-ai/bedrock-eventstream-extracted/test_bedrock_model_thinking_part_stream.0.eventstream")
	r := runCLI(t, t.TempDir(), nil, "run", "--replay", fixture, "--format", "json", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	var end map[string]any
	var thinking, text int
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		if d, ok := ev["delta"].(map[string]any); ok && ev["kind"] == "message_update" {
			switch d["type"] {
			case "thinking":
				thinking++
			case "text":
				text++
			}
		}
		if ev["kind"] == "session_turn_end" {
			end = ev
		}
	}
	u, _ := end["usage"].(map[string]any)
	// test_bedrock_model_thinking_part_stream: metadata usage inputTokens 36, outputTokens 73.
	if thinking == 0 || text == 0 || u["input"] != 36.0 || u["output"] != 73.0 || !strings.Contains(r.stderr, "provider bedrock") {
		t.Errorf("thinking deltas %d, text deltas %d, usage %v\nstderr %s", thinking, text, u, r.stderr)
	}
}
