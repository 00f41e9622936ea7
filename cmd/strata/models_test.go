package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/cachesim"
)

// An agent whose model is a kiro name (claude-opus-4.6-1m) is rendered
// with each provider's own id: the Claude API id in the Anthropic body, a
// Bedrock inference-profile id in the ConverseStream URL; the OpenAI and
// Gemini APIs have none, so the name goes as is with a warning.
func TestRenderMapsKiroModelNamePerProvider(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "k.json")
	os.WriteFile(agent, []byte(`{"name":"k","model":"claude-opus-4.6-1m"}`), 0o644)
	for _, tc := range []struct {
		provider, env, want string
		warn                bool
	}{
		{"anthropic", "", `"model":"claude-opus-4-6"`, false},
		{"bedrock", "AWS_REGION=us-west-2", "POST /model/us.anthropic.claude-opus-4-6-v1/converse-stream", false},
		{"bedrock", "AWS_REGION=eu-central-1", "model eu.anthropic.claude-opus-4-6-v1", false},
		{"openai", "", `"model":"claude-opus-4.6-1m"`, true},
		{"gemini", "", "models/claude-opus-4.6-1m:streamGenerateContent", true},
	} {
		t.Run(tc.provider+tc.env, func(t *testing.T) {
			var env []string
			if tc.env != "" {
				env = []string{tc.env}
			}
			r := runCLI(t, dir, env, "render", "--agent", agent, "--provider", tc.provider, "hi")
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
			}
			if out := r.stdout + r.stderr; !strings.Contains(out, tc.want) {
				t.Errorf("render lacks %q:\n%.600s", tc.want, out)
			}
			if got := strings.Contains(r.stderr, `warning: model "claude-opus-4.6-1m" (a kiro model name`); got != tc.warn {
				t.Errorf("warning shown %v, want %v:\n%s", got, tc.warn, r.stderr)
			}
		})
	}
}

// A model id that is neither a kiro name nor plausibly the provider's own
// is sent as is with a warning; a provider's own id is not warned about.
func TestUnknownModelIDWarns(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		provider, model string
		warn            bool
	}{
		{"anthropic", "gpt-4o", true},
		{"anthropic", "claude-sonnet-4-5", false},
		{"bedrock", "claude-sonnet-9.9", true},
		{"bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", false},
		{"openai", "gpt-4.1", false},
	} {
		r := runCLI(t, dir, nil, "render", "--provider", tc.provider, "--model", tc.model, "hi")
		if r.code != 0 {
			t.Fatalf("%s %s: exit %d\nstderr: %s", tc.provider, tc.model, r.code, r.stderr)
		}
		warned := strings.Contains(r.stderr, `warning: model "`+tc.model+`" is not a known`)
		if warned != tc.warn {
			t.Errorf("%s --model %s: warned %v, want %v\n%s", tc.provider, tc.model, warned, tc.warn, r.stderr)
		}
		if !strings.Contains(r.stdout+r.stderr, tc.model) {
			t.Errorf("%s --model %s: the id was not sent as is", tc.provider, tc.model)
		}
	}
}

// `strata models` lists every model of the price table with its provider
// and prices per MTok (table and JSON lines), and the kiro names and context
// windows of the Claude models.
func TestModelsListsPricedModels(t *testing.T) {
	table, err := cachesim.Default()
	if err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, t.TempDir(), nil, "models", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != len(table.Models) {
		t.Fatalf("%d rows, want %d (one per priced model)", len(lines), len(table.Models))
	}
	for i, line := range lines {
		var m modelJSON
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("row %d: %v: %s", i, err, line)
		}
		p := table.Models[i]
		if m.ID != p.ID || m.Provider != p.Provider || m.Input != p.Input || m.Output != p.Output || m.CacheRead != p.CacheRead {
			t.Errorf("row %d = %+v, want the price row %+v", i, m, p)
		}
		if m.ID == "claude-sonnet-4-6" && (m.ContextWindow != 200_000 || m.MaxContextWindow != 1_000_000 ||
			strings.Join(m.KiroNames, ",") != "claude-sonnet-4.6,claude-sonnet-4.6-1m") {
			t.Errorf("claude-sonnet-4-6 = %+v", m)
		}
	}
	r = runCLI(t, t.TempDir(), nil, "models")
	for _, want := range []string{"ID", "PROVIDER", "CONTEXT", "gpt-4.1", "gemini-2.5-pro", "claude-haiku-4.5", "$0.3"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	if r = runCLI(t, t.TempDir(), nil, "models", "--format", "yaml"); r.code != 2 {
		t.Errorf("--format yaml: exit %d, want 2", r.code)
	}
}
