// Package providers builds an llm.Provider from a provider name and the
// environment (API keys, base URLs), for the CLI and the ACP server.
package providers

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/strata-agent/strata/llm"
)

// Spec describes one selectable provider.
type Spec struct {
	Name    string  // --provider value
	API     llm.API // wire API
	KeyEnv  string  // variable holding the API key
	URLEnv  string  // variable overriding the base URL
	BaseURL string  // default base URL ("" = the SDK's default)
	Model   string  // default model ("" = --model is required)
	// KeyOptional is true for local servers that need no key.
	KeyOptional bool
	// URLRequired is true when there is no default base URL to fall back
	// on: URLEnv must be set (openai-compatible).
	URLRequired bool
}

// Specs lists every provider strata can talk to. OpenAI-compatible servers go
// through the Chat Completions API at their base URL.
var Specs = []Spec{
	{Name: "anthropic", API: "anthropic", KeyEnv: "ANTHROPIC_API_KEY", URLEnv: "ANTHROPIC_BASE_URL", Model: "claude-sonnet-4-5"},
	{Name: "openai-chat", API: "openai-chat", KeyEnv: "OPENAI_API_KEY", URLEnv: "OPENAI_BASE_URL", Model: "gpt-5-mini"},
	{Name: "openai-responses", API: "openai-responses", KeyEnv: "OPENAI_API_KEY", URLEnv: "OPENAI_BASE_URL", Model: "gpt-5-mini"},
	{Name: "deepseek", API: "openai-chat", KeyEnv: "DEEPSEEK_API_KEY", URLEnv: "DEEPSEEK_BASE_URL", BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat"},
	{Name: "xai", API: "openai-chat", KeyEnv: "XAI_API_KEY", URLEnv: "XAI_BASE_URL", BaseURL: "https://api.x.ai/v1", Model: "grok-4"},
	{Name: "ollama", API: "openai-chat", KeyEnv: "OLLAMA_API_KEY", URLEnv: "OLLAMA_BASE_URL", BaseURL: "http://127.0.0.1:11434/v1", KeyOptional: true},
	{Name: "vllm", API: "openai-chat", KeyEnv: "VLLM_API_KEY", URLEnv: "VLLM_BASE_URL", BaseURL: "http://127.0.0.1:8000/v1", KeyOptional: true},
	{Name: "openai-compatible", API: "openai-chat", KeyEnv: "OPENAI_API_KEY", URLEnv: "OPENAI_BASE_URL", KeyOptional: true, URLRequired: true},
	// Bedrock signs with the AWS credential chain (AWS_ACCESS_KEY_ID /
	// AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, AWS_PROFILE, SSO, …) in
	// AWS_REGION (default us-east-1); AWS_ENDPOINT_URL_BEDROCK_RUNTIME
	// overrides the endpoint (AWS SDK convention).
	{Name: "gemini", API: "gemini", KeyEnv: "GEMINI_API_KEY", URLEnv: "GEMINI_BASE_URL", Model: "gemini-2.5-flash"},
	{Name: "bedrock", API: "bedrock", KeyEnv: "AWS_ACCESS_KEY_ID", URLEnv: "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
		Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", KeyOptional: true},
}

// Names returns the valid provider names, sorted.
func Names() []string {
	var n []string
	for _, s := range Specs {
		n = append(n, s.Name)
	}
	sort.Strings(n)
	return n
}

// Lookup returns the spec named name, or a usage error listing valid names.
func Lookup(name string) (Spec, error) {
	for _, s := range Specs {
		if s.Name == name {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("unknown provider %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// Options tune New.
type Options struct {
	APIKey     string       // overrides the key variable
	BaseURL    string       // overrides the URL variable and the default
	HTTPClient *http.Client // nil = default transport
	MaxRetries int          // retries before any byte is streamed (llm.Limits gives the policy); 0 = none
	// Limits bound the idle wait, the honoured retry delay and the whole
	// call of every provider New builds (the zero value applies the
	// defaults of llm.Limits).
	Limits llm.Limits
}

// New builds the provider for spec through the registered client of its
// wire API (llm.NewClient; the CLI links every one with llm/all). It fails
// with an error naming the variable when a required key is missing, when
// an openai-compatible provider has no base URL, and with an error
// wrapping llm.ErrNotLinked when the API's provider package is not
// imported.
func New(spec Spec, o Options) (llm.Provider, error) {
	key := o.APIKey
	if key == "" {
		key = os.Getenv(spec.KeyEnv)
	}
	if key == "" && !spec.KeyOptional {
		return nil, fmt.Errorf("provider %s needs an API key: set %s", spec.Name, spec.KeyEnv)
	}
	if key == "" {
		key = "none" // local servers ignore it; the SDK wants a value
	}
	base := o.BaseURL
	if base == "" {
		base = os.Getenv(spec.URLEnv)
	}
	if base == "" {
		base = spec.BaseURL
	}
	if spec.URLRequired && base == "" {
		return nil, fmt.Errorf("provider openai-compatible needs a base URL: set %s (e.g. http://127.0.0.1:8000/v1)", spec.URLEnv)
	}
	if spec.API == llm.APIBedrock {
		// Bedrock signs with the AWS credential chain; only a key given
		// explicitly (render) is used as a static one.
		key = o.APIKey
	}
	p, err := llm.NewClient(spec.API, llm.ClientConfig{Name: spec.Name, APIKey: key, BaseURL: base,
		HTTPClient: o.HTTPClient, MaxRetries: o.MaxRetries, Limits: o.Limits})
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", spec.Name, err)
	}
	return p, nil
}

// FromEnv picks the provider when none was named: the first of
// ANTHROPIC_API_KEY, OPENAI_API_KEY that is set. ok is false when neither is.
// Gemini and Bedrock are used only when named (--provider).
func FromEnv() (spec Spec, ok bool) {
	for _, name := range []string{"anthropic", "openai-chat"} {
		s, _ := Lookup(name)
		if os.Getenv(s.KeyEnv) != "" {
			return s, true
		}
	}
	return Spec{}, false
}
