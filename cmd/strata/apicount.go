package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/token/apicount"
)

// providerCount is the provider's own count of a rendered request
// (render --explain --tokens api).
type providerCount struct {
	Endpoint    string `json:"endpoint"` // e.g. "Anthropic messages.count_tokens"
	Model       string `json:"model"`
	InputTokens int64  `json:"input_tokens"`
}

// apiCounter reaches a provider's count-tokens endpoint with the key and
// base URL of the environment.
type apiCounter struct {
	endpoint string
	cfg      apicount.Config
}

// newAPICounter checks that provider has a count-tokens endpoint and that
// its key is set; either failing is a usage error naming what to do.
func newAPICounter(provider string) (apiCounter, error) {
	ep := apicount.Endpoint(provider)
	if ep == "" {
		return apiCounter{}, usagef("--tokens api: provider %s has no count-tokens endpoint (Anthropic, Gemini and Bedrock have one); use --tokens exact", provider)
	}
	spec, err := providers.Lookup(provider)
	if err != nil {
		return apiCounter{}, usagef("--tokens api: %v", err)
	}
	key := os.Getenv(spec.KeyEnv)
	if provider == "bedrock" {
		// AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, else the AWS SDK's
		// credential chain (profile, SSO, roles), as a Bedrock run signs.
		return apiCounter{endpoint: ep, cfg: apicount.Config{APIKey: key, Secret: os.Getenv("AWS_SECRET_ACCESS_KEY"),
			SessionToken: os.Getenv("AWS_SESSION_TOKEN"), Region: os.Getenv("AWS_REGION"), BaseURL: os.Getenv(spec.URLEnv)}}, nil
	}
	if key == "" {
		return apiCounter{}, usagef("--tokens api asks %s, which needs %s: set it, or use --tokens exact", ep, spec.KeyEnv)
	}
	return apiCounter{endpoint: ep, cfg: apicount.Config{APIKey: key, BaseURL: os.Getenv(spec.URLEnv)}}, nil
}

// count asks the endpoint for body's input tokens.
func (a apiCounter) count(ctx context.Context, provider, model string, body []byte) (*providerCount, error) {
	n, err := apicount.Count(ctx, provider, model, body, a.cfg)
	if err != nil {
		return nil, err
	}
	return &providerCount{Endpoint: a.endpoint, Model: model, InputTokens: n}, nil
}

// offerAPICount tells the user of --explain that the provider can count the
// request exactly, when it has an endpoint and its key is set.
func offerAPICount(w io.Writer, provider string) {
	ep := apicount.Endpoint(provider)
	spec, err := providers.Lookup(provider)
	if ep == "" || err != nil || os.Getenv(spec.KeyEnv) == "" {
		return
	}
	fmt.Fprintf(w, "%s is set: --tokens api asks %s for the provider's exact total (one request, no message sent)\n", spec.KeyEnv, ep)
}
