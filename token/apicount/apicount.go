// Package apicount asks a provider's own token-counting endpoint how many
// input tokens a request holds: Anthropic's messages.count_tokens (POST
// /v1/messages/count_tokens, through anthropic-sdk-go), the Gemini API's
// models.countTokens (POST /v1beta/models/MODEL:countTokens, through
// google.golang.org/genai) and Bedrock Runtime's CountTokens (POST
// /model/MODEL/count-tokens, through aws-sdk-go-v2). Unlike the local counters of package token, the
// answer is the provider's exact count for that model; it costs one HTTP
// request and needs an API key. The other providers publish no such
// endpoint (ErrUnsupported).
//
// Both functions take the request body strata renders (the exact JSON the
// provider's SDK would send for a messages / generateContent call) and
// send the parts the count endpoint accepts.
package apicount

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"google.golang.org/genai"
)

// ErrUnsupported is returned by Count for a provider without a
// token-counting endpoint.
var ErrUnsupported = errors.New("provider has no token-counting endpoint")

// Config is where and how to reach the endpoint.
type Config struct {
	// APIKey is the provider's key (ANTHROPIC_API_KEY, GEMINI_API_KEY), or
	// Bedrock's AWS access key id (AWS_ACCESS_KEY_ID).
	APIKey string
	// Secret and SessionToken complete Bedrock's static AWS credentials
	// (AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); without APIKey and Secret
	// Bedrock uses the AWS SDK's default credential chain.
	Secret, SessionToken string
	// Region is Bedrock's AWS region ("" = us-east-1).
	Region string
	// BaseURL is the API root ("" = the SDK's default, the public API).
	BaseURL string
	// HTTPClient carries the request (nil = http.DefaultClient).
	HTTPClient *http.Client
}

// Endpoint names the endpoint Count uses for provider ("" = none): for
// reports, e.g. "Anthropic messages.count_tokens".
func Endpoint(provider string) string {
	switch provider {
	case "anthropic":
		return "Anthropic messages.count_tokens"
	case "gemini":
		return "Gemini models.countTokens"
	case "bedrock":
		return "Bedrock CountTokens"
	}
	return ""
}

// Count returns the input tokens of body (a rendered request of provider
// for model) as the provider's endpoint counts them. Errors: ErrUnsupported
// (wrapped, naming the provider), a body that is not a JSON object, or the
// endpoint's error (the SDK's, with the HTTP status).
func Count(ctx context.Context, provider, model string, body []byte, cfg Config) (int64, error) {
	switch provider {
	case "anthropic":
		return Anthropic(ctx, body, cfg)
	case "gemini":
		return Gemini(ctx, model, body, cfg)
	case "bedrock":
		return Bedrock(ctx, model, body, cfg)
	}
	return 0, fmt.Errorf("%s: %w (Anthropic, Gemini and Bedrock have one)", provider, ErrUnsupported)
}

// anthropicCountFields are the top-level fields of a Messages request that
// count_tokens accepts (Anthropic API reference, "Count Message tokens");
// max_tokens, stream, sampling and metadata are left out.
var anthropicCountFields = []string{"model", "messages", "system", "tools", "tool_choice", "thinking", "mcp_servers", "context_management"}

// pick returns the top-level fields of the JSON object body that are in
// fields, or an error when body is not a JSON object.
func pick(body []byte, fields []string) (map[string]json.RawMessage, error) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	keep := map[string]json.RawMessage{}
	for _, k := range fields {
		if v, ok := req[k]; ok {
			keep[k] = v
		}
	}
	return keep, nil
}

// Anthropic counts a Messages request body with messages.count_tokens.
func Anthropic(ctx context.Context, body []byte, cfg Config) (int64, error) {
	keep, err := pick(body, anthropicCountFields)
	if err != nil {
		return 0, fmt.Errorf("anthropic count_tokens: %w", err)
	}
	countBody, err := json.Marshal(keep)
	if err != nil {
		return 0, err
	}
	opts := []option.RequestOption{option.WithAPIKey(cfg.APIKey), option.WithMaxRetries(0),
		option.WithRequestBody("application/json", countBody)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	c := anthropic.NewClient(opts...)
	res, err := c.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{})
	if err != nil {
		return 0, fmt.Errorf("anthropic count_tokens: %w", err)
	}
	return res.InputTokens, nil
}

// Gemini counts a generateContent request body with models.countTokens,
// sent as {"generateContentRequest": {"model": "models/MODEL", …body}} so
// that the system instruction and tools count too (the SDK's own
// CountTokensConfig refuses them on the Gemini API).
func Gemini(ctx context.Context, model string, body []byte, cfg Config) (int64, error) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return 0, fmt.Errorf("gemini countTokens: request body: %w", err)
	}
	var contents []*genai.Content
	if raw, err := json.Marshal(req["contents"]); err == nil {
		_ = json.Unmarshal(raw, &contents) // the SDK wants some contents; the body below replaces them
	}
	gen := map[string]any{"model": "models/" + strings.TrimPrefix(model, "models/")}
	for k, v := range req {
		gen[k] = v
	}
	cc := &genai.ClientConfig{APIKey: cfg.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: cfg.HTTPClient}
	if cfg.BaseURL != "" {
		cc.HTTPOptions.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/") + "/"
	}
	c, err := genai.NewClient(ctx, cc)
	if err != nil {
		return 0, fmt.Errorf("gemini countTokens: %w", err)
	}
	res, err := c.Models.CountTokens(ctx, model, contents, &genai.CountTokensConfig{HTTPOptions: &genai.HTTPOptions{
		ExtrasRequestProvider: func(map[string]any) map[string]any {
			return map[string]any{"generateContentRequest": gen}
		}}})
	if err != nil {
		return 0, fmt.Errorf("gemini countTokens: %w", err)
	}
	return int64(res.TotalTokens), nil
}
