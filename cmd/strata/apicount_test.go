package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// render --explain --tokens api asks the provider's count-tokens endpoint
// (a loopback server checking the request's path, key and body) and prints
// its total; with a key set, plain --explain offers it; without a key, or
// for a provider without an endpoint, it is a usage error.
func TestRenderExplainProviderCount(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		json.Unmarshal(raw, &b)
		gen, _ := b["generateContentRequest"].(map[string]any)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/messages/count_tokens" && r.Header.Get("X-Api-Key") == "fake" &&
			b["model"] == "claude-sonnet-4-5" && b["tools"] != nil && b["system"] != nil && b["max_tokens"] == nil:
			io.WriteString(w, `{"input_tokens":3071}`)
		case r.URL.EscapedPath() == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens" &&
			strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=fake/") && strings.Contains(string(raw), `"converse":{"messages"`):
			io.WriteString(w, `{"inputTokens":3080}`)
		case r.URL.Path == "/v1beta/models/gemini-2.5-flash:countTokens" && r.Header.Get("X-Goog-Api-Key") == "fake" &&
			gen["model"] == "models/gemini-2.5-flash" && gen["tools"] != nil && gen["systemInstruction"] != nil:
			io.WriteString(w, `{"totalTokens":3090}`)
		default:
			http.Error(w, "unexpected request "+r.URL.Path+" "+string(raw), http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	ws := t.TempDir()
	for _, tc := range []struct {
		provider string
		env      []string
		want     string
	}{
		{"anthropic", []string{"ANTHROPIC_API_KEY=fake", "ANTHROPIC_BASE_URL=" + srv.URL}, "Anthropic messages.count_tokens: 3071 input tokens in all (the provider's exact count for claude-sonnet-4-5)"},
		{"gemini", []string{"GEMINI_API_KEY=fake", "GEMINI_BASE_URL=" + srv.URL}, "Gemini models.countTokens: 3090 input tokens in all (the provider's exact count for gemini-2.5-flash)"},
		{"bedrock", []string{"AWS_ACCESS_KEY_ID=fake", "AWS_SECRET_ACCESS_KEY=fake-secret", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME=" + srv.URL,
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"},
			"Bedrock CountTokens: 3080 input tokens in all (the provider's exact count for us.anthropic.claude-sonnet-4-5-20250929-v1:0)"},
	} {
		r := runCLI(t, ws, tc.env, "render", "--provider", tc.provider, "--explain", "--tokens", "api", "hi")
		if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("%s --tokens api: exit %d\n%s\n%s\nwant %q", tc.provider, r.code, r.stdout, r.stderr, tc.want)
		}
		r = runCLI(t, ws, tc.env, "render", "--provider", tc.provider, "--explain", "--tokens", "api", "--format", "json", "hi")
		if !strings.Contains(r.stdout, `"provider_count": {`) {
			t.Errorf("%s json lacks provider_count:\n%s", tc.provider, r.stdout)
		}
		r = runCLI(t, ws, tc.env, "render", "--provider", tc.provider, "--explain", "hi")
		if r.code != 0 || !strings.Contains(r.stdout, "is set: --tokens api asks") {
			t.Errorf("%s --explain with a key does not offer the endpoint:\n%s", tc.provider, r.stdout)
		}
	}
	r := runCLI(t, ws, nil, "render", "--provider", "anthropic", "--explain", "hi")
	if strings.Contains(r.stdout, "--tokens api") {
		t.Errorf("the endpoint is offered without a key:\n%s", r.stdout)
	}
	r = runCLI(t, ws, nil, "render", "--provider", "anthropic", "--explain", "--tokens", "api", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "needs ANTHROPIC_API_KEY") {
		t.Errorf("--tokens api without a key: exit %d %s", r.code, r.stderr)
	}
	r = runCLI(t, ws, []string{"OPENAI_API_KEY=fake"}, "render", "--provider", "openai", "--explain", "--tokens", "api", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "has no count-tokens endpoint") {
		t.Errorf("--tokens api for openai: exit %d %s", r.code, r.stderr)
	}
}
