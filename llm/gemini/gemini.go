package gemini

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/internal/limit"
)

// ProviderName is the id Name returns and APIError.Provider carries.
const ProviderName = "gemini"

// Config configures a Provider.
type Config struct {
	APIKey string // sent as the x-goog-api-key header
	// BaseURL is the API root, e.g. "http://127.0.0.1:43127/"; "" = the SDK
	// default (https://generativelanguage.googleapis.com/).
	BaseURL string
	// HTTPClient carries the requests; nil = a client on
	// http.DefaultTransport (the SDK's default for this backend).
	HTTPClient *http.Client
	// MaxRetries is how many times a request is sent again after a
	// retryable answer or a connection error, before any byte is streamed
	// (llm.Limits gives the policy); 0 = none.
	MaxRetries int
	// Limits bound the idle wait, the honoured retry delay and the whole
	// call (llm.Limits; the zero value applies the defaults).
	Limits llm.Limits
	// NonStreaming uses generateContent instead of streamGenerateContent;
	// Stream then reports the final content as deltas in one go.
	NonStreaming bool
}

// Provider talks to the Gemini API. It is safe for concurrent use.
type Provider struct {
	client *genai.Client
	cfg    Config
	limit  *limit.Limiter
}

// New returns a provider for cfg (the Gemini Developer API backend; the SDK
// reads no API key from the environment when one is given). The SDK's
// retries stay off (no HTTPOptions.RetryOptions): the HTTP client applies
// cfg.MaxRetries and cfg.Limits, taking the wait of a 429 from its
// google.rpc.RetryInfo. It fails only when the SDK rejects the
// configuration.
func New(cfg Config) (*Provider, error) {
	lim := limit.New(limit.Options{Provider: ProviderName, Limits: cfg.Limits, MaxRetries: cfg.MaxRetries,
		Streaming: !cfg.NonStreaming, BodyRetryDelay: bodyRetryDelay})
	cc := &genai.ClientConfig{APIKey: cfg.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: lim.Client(cfg.HTTPClient)}
	if cfg.BaseURL != "" {
		cc.HTTPOptions.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/") + "/"
	}
	c, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", llm.InvalidRequest(err))
	}
	return &Provider{client: c, cfg: cfg, limit: lim}, nil
}

// Name returns "gemini".
func (p *Provider) Name() string { return ProviderName }

// API returns llm.APIGemini.
func (p *Provider) API() llm.API { return llm.APIGemini }

// Stream sends req to streamGenerateContent (SSE) and streams the answer
// (see llm.Provider for the contract).
//
// Deltas: text → llm.DeltaText, thought summaries → llm.DeltaThinking, each
// function call → one llm.DeltaToolCall with its whole arguments (Gemini
// sends calls whole unless the request asks for streamed arguments, which
// strata never does). Index is the block's position in the returned message.
//
// Errors: a mapping error naming the field (see "Request mapping" in the
// package documentation) before anything is sent; *llm.APIError for an HTTP
// error (status, status name as Type, message, retry delay from RetryInfo);
// an error wrapping llm.ErrStreamTruncated when the stream ends without a
// finishReason (and without a prompt block); an *llm.LimitError when a limit
// of Config.Limits ended the call; ctx.Err() when ctx is cancelled.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	return p.limit.Call(ctx, func(ctx context.Context) (*llm.Response, error) { return p.stream(ctx, req, onDelta) })
}

// stream is Stream within the call's limits.
func (p *Provider) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	contents, cfg, err := params(req)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	if onDelta == nil {
		onDelta = func(llm.Delta) {}
	}
	acc := &accumulator{model: req.Model, onDelta: onDelta}
	if p.cfg.NonStreaming {
		resp, err := p.client.Models.GenerateContent(ctx, req.Model, contents, cfg)
		if err != nil {
			return nil, wrapError(ctx, err)
		}
		acc.add(resp)
		return acc.response()
	}
	for resp, err := range p.client.Models.GenerateContentStream(ctx, req.Model, contents, cfg) {
		if err != nil {
			return nil, wrapError(ctx, err)
		}
		acc.add(resp)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return acc.response()
}

// accumulator builds the response from generateContent chunks.
type accumulator struct {
	model   string
	onDelta func(llm.Delta)
	msg     llm.Message
	calls   int
	finish  genai.FinishReason
	blocked genai.BlockedReason
	usage   *genai.GenerateContentResponseUsageMetadata
	id      string
	// more is the text streamed into the last block after its first part,
	// gathered in a builder (string += would copy the whole text for every
	// part: quadratic in the answer) and appended to it by flush.
	more strings.Builder
}

// flush appends the gathered text to the last block.
func (a *accumulator) flush() {
	if a.more.Len() > 0 {
		a.msg.Content[len(a.msg.Content)-1].Text += a.more.String()
		a.more.Reset()
	}
}

func (a *accumulator) add(r *genai.GenerateContentResponse) {
	if r.ResponseID != "" {
		a.id = r.ResponseID
	}
	if r.ModelVersion != "" {
		a.model = r.ModelVersion
	}
	if r.UsageMetadata != nil {
		a.usage = r.UsageMetadata
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		a.blocked = r.PromptFeedback.BlockReason
	}
	if len(r.Candidates) == 0 {
		return
	}
	c := r.Candidates[0]
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
	if c.Content == nil {
		return
	}
	for _, part := range c.Content.Parts {
		a.part(part)
	}
}

// part adds one response part: text and thoughts extend the last block of
// their kind when it is the last block; other parts start blocks.
func (a *accumulator) part(p *genai.Part) {
	sig := ""
	if len(p.ThoughtSignature) > 0 {
		sig = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	n := len(a.msg.Content)
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		id := fc.ID
		if id == "" {
			id = a.syntheticID()
		}
		args := fc.Args
		if args == nil {
			args = map[string]any{}
		}
		in, _ := json.Marshal(args)
		a.flush()
		b := llm.ToolUseBlock(id, fc.Name, in)
		b.Signature = sig
		a.msg.Content = append(a.msg.Content, b)
		a.calls++
		a.onDelta(llm.Delta{Type: llm.DeltaToolCall, Index: n, ID: id, Name: fc.Name, Text: string(in)})
	case p.InlineData != nil:
		a.flush()
		a.msg.Content = append(a.msg.Content, llm.Block{Type: llm.BlockImage, MediaType: p.InlineData.MIMEType, Data: p.InlineData.Data})
	case p.ExecutableCode != nil, p.CodeExecutionResult != nil, p.FileData != nil:
		// server-side parts: dropped (see the package doc)
	case p.Text != "" || sig != "":
		typ, dt := llm.BlockText, llm.DeltaText
		if p.Thought {
			typ, dt = llm.BlockThinking, llm.DeltaThinking
		}
		if n > 0 && a.msg.Content[n-1].Type == typ {
			last := &a.msg.Content[n-1]
			a.more.WriteString(p.Text)
			if sig != "" {
				last.Signature = sig
			}
		} else {
			a.flush()
			a.msg.Content = append(a.msg.Content, llm.Block{Type: typ, Text: p.Text, Signature: sig})
			n++
		}
		if p.Text != "" {
			a.onDelta(llm.Delta{Type: dt, Index: n - 1, Text: p.Text})
		}
	}
}

func (a *accumulator) syntheticID() string {
	if a.id != "" {
		return fmt.Sprintf("%s%s-%d", syntheticPrefix, a.id, a.calls)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return syntheticPrefix + hex.EncodeToString(b)
}

func (a *accumulator) response() (*llm.Response, error) {
	a.flush()
	resp := &llm.Response{Message: a.msg, Model: a.model, ID: a.id, Usage: usage(a.usage)}
	resp.Message.Role = llm.RoleAssistant
	switch {
	case a.blocked != "":
		resp.StopReason, resp.ProviderStopReason = llm.StopRefusal, "prompt blocked: "+string(a.blocked)
	case a.finish == "":
		return nil, fmt.Errorf("gemini: %w (no finishReason)", llm.ErrStreamTruncated)
	default:
		resp.StopReason, resp.ProviderStopReason = stopReason(a.finish, a.calls > 0), string(a.finish)
	}
	return resp, nil
}

// stopReason maps a finishReason; STOP with function calls is tool_use.
func stopReason(f genai.FinishReason, calls bool) llm.StopReason {
	switch f {
	case genai.FinishReasonMaxTokens:
		return llm.StopMaxTokens
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist, genai.FinishReasonProhibitedContent,
		genai.FinishReasonSPII, genai.FinishReasonImageSafety, genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return llm.StopRefusal
	}
	if calls {
		return llm.StopToolUse
	}
	return llm.StopEndTurn
}

// usage maps usageMetadata: promptTokenCount includes the cached tokens
// (Gemini docs, "Context caching"), so Input is prompt − cached (+ tool-use
// prompt tokens); Output includes thoughtsTokenCount (billed as output).
func usage(u *genai.GenerateContentResponseUsageMetadata) llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	return llm.Usage{Input: int64(u.PromptTokenCount-u.CachedContentTokenCount) + int64(u.ToolUsePromptTokenCount),
		CacheRead: int64(u.CachedContentTokenCount), Output: int64(u.CandidatesTokenCount + u.ThoughtsTokenCount),
		Reasoning: int64(u.ThoughtsTokenCount), Total: int64(u.TotalTokenCount)}
}

// wrapError maps SDK errors to *llm.APIError.
func wrapError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae genai.APIError
	var pae *genai.APIError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &pae):
		ae = *pae
	default:
		return fmt.Errorf("gemini: %w", err)
	}
	out := &llm.APIError{Provider: ProviderName, StatusCode: ae.Code, Type: ae.Status, Message: ae.Message}
	out.RetryAfter, _ = retryInfo(ae.Details)
	return out
}

// retryInfo returns the retryDelay of the google.rpc.RetryInfo among an
// error's details (e.g. "34.4s"); ok is false when there is none.
func retryInfo(details []map[string]any) (d time.Duration, ok bool) {
	for _, det := range details {
		if t, _ := det["@type"].(string); t == "type.googleapis.com/google.rpc.RetryInfo" {
			if s, isStr := det["retryDelay"].(string); isStr {
				if d, err := time.ParseDuration(s); err == nil {
					return d, true
				}
			}
		}
	}
	return 0, false
}

// bodyRetryDelay reads the RetryInfo delay of an error body
// {"error": {"code", "message", "status", "details": […]}} for the retry
// policy (limit.Options.BodyRetryDelay).
func bodyRetryDelay(body []byte) (time.Duration, bool) {
	var e struct {
		Error genai.APIError `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return 0, false
	}
	return retryInfo(e.Error.Details)
}
