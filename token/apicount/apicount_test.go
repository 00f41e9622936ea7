package apicount

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// countServer is a loopback endpoint that checks the request (path, key
// header, body shape) with check and answers reply.
func countServer(t *testing.T, check func(r *http.Request, body map[string]any) string, reply string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "body is not JSON: "+string(raw), http.StatusBadRequest)
			return
		}
		if problem := check(r, body); problem != "" {
			t.Logf("rejected: %s; body %s", problem, raw)
			http.Error(w, `{"error":{"message":"`+problem+`"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAnthropicSendsTheCountableFields(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"temperature":0.2,
		"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],
		"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],
		"tools":[{"name":"glob","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto"}}`
	srv := countServer(t, func(r *http.Request, b map[string]any) string {
		switch {
		case r.Method != http.MethodPost || r.URL.Path != "/v1/messages/count_tokens":
			return "wrong endpoint " + r.Method + " " + r.URL.Path
		case r.Header.Get("X-Api-Key") != "fake-key" || r.Header.Get("Anthropic-Version") == "":
			return "missing x-api-key or anthropic-version"
		case b["model"] != "claude-sonnet-4-5" || b["messages"] == nil || b["system"] == nil || b["tools"] == nil || b["tool_choice"] == nil:
			return "missing model, messages, system, tools or tool_choice"
		case b["max_tokens"] != nil || b["stream"] != nil || b["temperature"] != nil:
			return "count_tokens does not take max_tokens, stream or temperature"
		}
		return ""
	}, `{"input_tokens":3071}`)
	n, err := Count(context.Background(), "anthropic", "claude-sonnet-4-5", []byte(body), Config{APIKey: "fake-key", BaseURL: srv.URL})
	if err != nil || n != 3071 {
		t.Fatalf("Count = %d, %v; want 3071", n, err)
	}
}

func TestGeminiSendsTheWholeGenerateContentRequest(t *testing.T) {
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{},
		"systemInstruction":{"role":"user","parts":[{"text":"sys"}]},
		"tools":[{"functionDeclarations":[{"name":"glob","description":"find files"}]}]}`
	srv := countServer(t, func(r *http.Request, b map[string]any) string {
		gen, _ := b["generateContentRequest"].(map[string]any)
		switch {
		case r.Method != http.MethodPost || r.URL.Path != "/v1beta/models/gemini-2.5-flash:countTokens":
			return "wrong endpoint " + r.Method + " " + r.URL.Path
		case r.Header.Get("X-Goog-Api-Key") != "fake-key":
			return "missing x-goog-api-key"
		case b["contents"] != nil || gen == nil:
			return "want generateContentRequest alone (contents and generateContentRequest are exclusive)"
		case gen["model"] != "models/gemini-2.5-flash" || gen["contents"] == nil || gen["systemInstruction"] == nil || gen["tools"] == nil:
			return "generateContentRequest lacks model, contents, systemInstruction or tools"
		}
		return ""
	}, `{"totalTokens":987}`)
	n, err := Count(context.Background(), "gemini", "gemini-2.5-flash", []byte(body), Config{APIKey: "fake-key", BaseURL: srv.URL})
	if err != nil || n != 987 {
		t.Fatalf("Count = %d, %v; want 987", n, err)
	}
}

func TestCountErrors(t *testing.T) {
	if _, err := Count(context.Background(), "openai-chat", "gpt-5", []byte(`{}`), Config{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("openai-chat: %v, want ErrUnsupported", err)
	}
	srv := countServer(t, func(*http.Request, map[string]any) string { return "invalid x-api-key" }, "")
	_, err := Count(context.Background(), "anthropic", "m", []byte(`{"model":"m","messages":[]}`), Config{APIKey: "bad", BaseURL: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "anthropic count_tokens") {
		t.Errorf("endpoint error: %v; want it to name count_tokens and the status", err)
	}
	if _, err := Count(context.Background(), "gemini", "m", []byte(`[`), Config{}); err == nil {
		t.Error("a body that is not JSON was counted")
	}
}

// Bedrock's CountTokens gets the rendered Converse request's countable
// fields under input.converse, signed (SigV4) with the static key given.
func TestBedrockSendsTheConverseRequest(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	body := `{"messages":[{"content":[{"text":"hi"},{"cachePoint":{"type":"default"}}],"role":"user"}],
		"system":[{"text":"sys"}],"toolConfig":{"tools":[{"toolSpec":{"name":"glob","inputSchema":{"json":{"type":"object"}}}}]},
		"inferenceConfig":{"maxTokens":1024}}`
	model := "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	srv := countServer(t, func(r *http.Request, b map[string]any) string {
		in, _ := b["input"].(map[string]any)
		conv, _ := in["converse"].(map[string]any)
		msgs, _ := json.Marshal(conv["messages"])
		switch {
		case r.Method != http.MethodPost || r.URL.EscapedPath() != "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens":
			return "wrong endpoint " + r.Method + " " + r.URL.EscapedPath()
		case !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=fake-id/"):
			return "not signed with the static key"
		case conv == nil || conv["system"] == nil || conv["toolConfig"] == nil || !strings.Contains(string(msgs), `"text":"hi"`):
			return "input.converse lacks the rendered messages, system or toolConfig"
		case conv["inferenceConfig"] != nil || b["inferenceConfig"] != nil:
			return "CountTokens does not take inferenceConfig"
		}
		return ""
	}, `{"inputTokens":3080}`)
	n, err := Count(context.Background(), "bedrock", model, []byte(body), Config{APIKey: "fake-id", Secret: "fake-secret", BaseURL: srv.URL})
	if err != nil || n != 3080 {
		t.Fatalf("Count = %d, %v; want 3080", n, err)
	}
}
