package providers

import (
	"strings"
	"testing"
)

// Names are sorted and every spec builds with a key; a missing key, a
// missing openai-compatible base URL and an unknown name are errors naming
// the variable or the valid names.
func TestNew(t *testing.T) {
	names := Names()
	if strings.Join(names, ",") != "anthropic,bedrock,deepseek,gemini,ollama,openai-chat,openai-compatible,openai-responses,vllm,xai" {
		t.Errorf("names %v", names)
	}
	for _, s := range Specs {
		p, err := New(s, Options{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
		if err != nil || p.Name() == "" {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
	for _, v := range []string{"ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL"} {
		t.Setenv(v, "")
	}
	a, _ := Lookup("anthropic")
	if _, err := New(a, Options{}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("missing key: %v", err)
	}
	g, _ := Lookup("gemini")
	if _, err := New(g, Options{}); err == nil || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("missing gemini key: %v", err)
	}
	oc, _ := Lookup("openai-compatible")
	if _, err := New(oc, Options{}); err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("missing base URL: %v", err)
	}
	if _, err := Lookup("claude"); err == nil || !strings.Contains(err.Error(), "anthropic, bedrock") {
		t.Errorf("unknown name: %v", err)
	}
}
