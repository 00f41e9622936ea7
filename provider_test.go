package strata_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
)

// "openai" selects the OpenAI Chat Completions provider (the name bench and
// replay give the OpenAI family); an unknown name is a *ConfigError listing
// the valid names and the alias.
func TestProviderNameOpenAIIsOpenAIChat(t *testing.T) {
	ws := openWorkspace(t, strata.Options{Dir: t.TempDir(), ProviderName: "openai"})
	if ws.ProviderName() != "openai-chat" {
		t.Errorf("ProviderName() = %q, want openai-chat", ws.ProviderName())
	}
	r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "hi"})
	if err != nil || !strings.HasSuffix(r.URL, "/chat/completions") {
		t.Errorf("render: %v, URL %q", err, r.URL)
	}
	_, err = strata.Open(context.Background(), strata.Options{Dir: t.TempDir(), ProviderName: "open-ai"})
	var ce *strata.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `"open-ai"`) || !strings.Contains(err.Error(), "openai-chat") ||
		!strings.Contains(err.Error(), "openai is accepted") {
		t.Errorf("unknown provider: %v", err)
	}
}
