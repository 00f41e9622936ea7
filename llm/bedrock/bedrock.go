package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/internal/limit"
)

// ProviderName is the id Name returns and APIError.Provider carries.
const ProviderName = "bedrock"

// Config configures a Provider.
//
// Credentials: with AccessKeyID and SecretAccessKey set, requests are signed
// with those static keys (and SessionToken) and nothing else is read. With
// neither set, New builds the AWS SDK's default credential chain
// (environment variables AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN, the shared files ~/.aws/config and ~/.aws/credentials
// with Profile or AWS_PROFILE, SSO, web identity, container and instance
// roles); credentials are then fetched at the first request and refreshed
// by the SDK. Only the credentials come from that chain: region, endpoint
// and retries are the fields below.
type Config struct {
	// Region is the AWS region, e.g. "us-east-1"; required (request signing
	// and the regional endpoint use it).
	Region string
	// AccessKeyID, SecretAccessKey and SessionToken are static credentials
	// (SigV4); set both keys or neither.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Profile names the shared-config profile the default chain reads
	// (e.g. "bedrock-dev"); "" = AWS_PROFILE, else "default". It cannot be
	// combined with static keys.
	Profile string
	// BaseURL overrides the endpoint, e.g. "http://127.0.0.1:43127"; "" =
	// the regional bedrock-runtime endpoint.
	BaseURL string
	// HTTPClient carries the requests; nil = the SDK default.
	HTTPClient *http.Client
	// MaxRetries is how many times a request is sent again after a 408,
	// 409, 429 or 5xx answer or a connection error, before any byte is
	// streamed (llm.Limits gives the policy; the SDK's own retries are off);
	// 0 = none (tests).
	MaxRetries int
	// Limits bound the idle wait, the honoured retry delay and the whole
	// call (llm.Limits; the zero value applies the defaults).
	Limits llm.Limits
	// NonStreaming uses Converse instead of ConverseStream; Stream then
	// reports the final content as deltas in one go, one per block.
	NonStreaming bool
}

// Provider talks to the Bedrock Converse API. It is safe for concurrent use.
type Provider struct {
	client *bedrockruntime.Client
	cfg    Config
	limit  *limit.Limiter
}

// New returns a provider for cfg. It fails, with an error naming the field,
// when Region is empty, when only one of the two static keys is set (or a
// session token without keys), when static keys and Profile are both set,
// and when the default chain's configuration cannot be loaded (e.g. Profile
// names no profile in the shared files).
func New(cfg Config) (*Provider, error) {
	if cfg.Region == "" {
		return nil, errors.New("bedrock: Config.Region is empty: set the AWS region (e.g. us-east-1)")
	}
	creds, err := credentialsFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("bedrock: %w", llm.InvalidRequest(err))
	}
	// One attempt per SDK call: the HTTP client applies cfg.MaxRetries and
	// cfg.Limits (package llm/internal/limit).
	lim := limit.New(limit.Options{Provider: ProviderName, Limits: cfg.Limits, MaxRetries: cfg.MaxRetries, Streaming: !cfg.NonStreaming})
	ac := aws.Config{Region: cfg.Region, RetryMaxAttempts: 1, Credentials: creds}
	var next aws.HTTPClient = awshttp.NewBuildableClient()
	if cfg.HTTPClient != nil {
		next = cfg.HTTPClient
	}
	ac.HTTPClient = bodyWatcher{lim.Doer(next)}
	client := bedrockruntime.NewFromConfig(ac, func(o *bedrockruntime.Options) {
		if cfg.BaseURL != "" {
			o.BaseEndpoint = aws.String(cfg.BaseURL)
		}
	})
	return &Provider{client: client, cfg: cfg, limit: lim}, nil
}

// credentialsFor returns the static credentials of cfg or, with no keys,
// the AWS SDK's default credential chain (see Config).
func credentialsFor(cfg Config) (aws.CredentialsProvider, error) {
	static := cfg.AccessKeyID != "" || cfg.SecretAccessKey != "" || cfg.SessionToken != ""
	switch {
	case static && (cfg.AccessKeyID == "" || cfg.SecretAccessKey == ""):
		return nil, errors.New("static credentials need both AccessKeyID and SecretAccessKey")
	case static && cfg.Profile != "":
		return nil, fmt.Errorf("static credentials and Profile %q are both set: use one", cfg.Profile)
	case static:
		return credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken), nil
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(cfg.Region)}
	if cfg.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(cfg.Profile))
	}
	ac, err := config.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS credential chain (profile %q): %w", cfg.Profile, err)
	}
	return ac.Credentials, nil
}

// Name returns "bedrock".
func (p *Provider) Name() string { return ProviderName }

// API returns llm.APIBedrock.
func (p *Provider) API() llm.API { return llm.APIBedrock }

// Stream sends req to ConverseStream (POST /model/{id}/converse-stream) and
// streams the answer (see llm.Provider for the contract).
//
// Deltas: text → llm.DeltaText, reasoning text → llm.DeltaThinking, toolUse
// input fragments → llm.DeltaToolCall with the call's id and name (a call
// with no streamed input is reported whole at its contentBlockStop). Index
// is the block's position in the returned message.
//
// Errors: a mapping error naming the field (see "Request mapping" in the
// package documentation) before anything is sent; *llm.APIError for an HTTP
// error or an exception event in the
// stream; an error wrapping llm.ErrStreamTruncated when the stream ends
// before messageStop or the body breaks off mid-event; an *llm.LimitError
// when a limit of Config.Limits ended the call; ctx.Err() when ctx is
// cancelled.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	return p.limit.Call(ctx, func(ctx context.Context) (*llm.Response, error) { return p.stream(ctx, req, onDelta) })
}

// stream is Stream within the call's limits.
func (p *Provider) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	in, err := params(req)
	if err != nil {
		return nil, fmt.Errorf("bedrock: %w", err)
	}
	if onDelta == nil {
		onDelta = func(llm.Delta) {}
	}
	if p.cfg.NonStreaming {
		return p.converse(ctx, in, onDelta)
	}
	ctx = watchBody(ctx)
	out, err := p.client.ConverseStream(ctx, in)
	if err != nil {
		return nil, wrapError(ctx, err)
	}
	es := out.GetStream()
	defer es.Close()
	var acc accumulator
	for ev := range es.Events() {
		if err := acc.add(ev, onDelta); err != nil {
			return nil, err
		}
	}
	if err := es.Err(); err != nil {
		return nil, wrapError(ctx, err)
	}
	if err := bodyErr(ctx); err != nil {
		return nil, fmt.Errorf("bedrock: %w: %v", llm.ErrStreamTruncated, err)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return acc.response(req.Model)
}

// block is one content block being streamed.
type block struct {
	b    llm.Block
	frag strings.Builder // the text, reasoning text or toolUse input fragments so far
	sent bool            // a delta of this block was reported
}

// accumulator builds the response from ConverseStream events.
type accumulator struct {
	blocks  map[int32]*block
	order   []int32
	stop    types.StopReason
	stopped bool
	usage   *types.TokenUsage
}

func (a *accumulator) get(i *int32, typ llm.BlockType) *block {
	if a.blocks == nil {
		a.blocks = map[int32]*block{}
	}
	k := aws.ToInt32(i)
	b, ok := a.blocks[k]
	if !ok {
		b = &block{b: llm.Block{Type: typ}}
		a.blocks[k] = b
		a.order = append(a.order, k)
	}
	return b
}

// index is b's position in the final message.
func (a *accumulator) index(k int32) int {
	for i, o := range a.order {
		if o == k {
			return i
		}
	}
	return len(a.order)
}

func (a *accumulator) add(ev types.ConverseStreamOutput, onDelta func(llm.Delta)) error {
	switch e := ev.(type) {
	case *types.ConverseStreamOutputMemberContentBlockStart:
		if s, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
			b := a.get(e.Value.ContentBlockIndex, llm.BlockToolUse)
			b.b.ID, b.b.Name = aws.ToString(s.Value.ToolUseId), aws.ToString(s.Value.Name)
		}
	case *types.ConverseStreamOutputMemberContentBlockDelta:
		k := aws.ToInt32(e.Value.ContentBlockIndex)
		switch d := e.Value.Delta.(type) {
		case *types.ContentBlockDeltaMemberText:
			b := a.get(&k, llm.BlockText)
			b.frag.WriteString(d.Value)
			if d.Value != "" {
				onDelta(llm.Delta{Type: llm.DeltaText, Index: a.index(k), Text: d.Value})
			}
		case *types.ContentBlockDeltaMemberToolUse:
			b := a.get(&k, llm.BlockToolUse)
			frag := aws.ToString(d.Value.Input)
			b.frag.WriteString(frag)
			if frag != "" {
				b.sent = true
				onDelta(llm.Delta{Type: llm.DeltaToolCall, Index: a.index(k), ID: b.b.ID, Name: b.b.Name, Text: frag})
			}
		case *types.ContentBlockDeltaMemberReasoningContent:
			switch r := d.Value.(type) {
			case *types.ReasoningContentBlockDeltaMemberText:
				b := a.get(&k, llm.BlockThinking)
				b.frag.WriteString(r.Value)
				if r.Value != "" {
					onDelta(llm.Delta{Type: llm.DeltaThinking, Index: a.index(k), Text: r.Value})
				}
			case *types.ReasoningContentBlockDeltaMemberSignature:
				b := a.get(&k, llm.BlockThinking)
				b.b.Signature += r.Value
			case *types.ReasoningContentBlockDeltaMemberRedactedContent:
				b := a.get(&k, llm.BlockRedactedThinking)
				b.b.Type = llm.BlockRedactedThinking
				b.b.Data = append(b.b.Data, r.Value...)
			}
		}
	case *types.ConverseStreamOutputMemberContentBlockStop:
		k := aws.ToInt32(e.Value.ContentBlockIndex)
		if b, ok := a.blocks[k]; ok && b.b.Type == llm.BlockToolUse && !b.sent {
			in := b.frag.String()
			if in == "" {
				in = "{}"
			}
			b.sent = true
			onDelta(llm.Delta{Type: llm.DeltaToolCall, Index: a.index(k), ID: b.b.ID, Name: b.b.Name, Text: in})
		}
	case *types.ConverseStreamOutputMemberMessageStop:
		a.stop, a.stopped = e.Value.StopReason, true
	case *types.ConverseStreamOutputMemberMetadata:
		a.usage = e.Value.Usage
	}
	return nil
}

func (a *accumulator) response(model string) (*llm.Response, error) {
	if !a.stopped {
		// A stream cut at a message boundary before messageStop (a cut
		// inside a message is caught by bodyWatcher).
		return nil, fmt.Errorf("bedrock: %w (no messageStop event)", llm.ErrStreamTruncated)
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	for _, k := range a.order {
		b := a.blocks[k]
		switch b.b.Type {
		case llm.BlockText, llm.BlockThinking:
			b.b.Text = b.frag.String()
		case llm.BlockToolUse:
			in := b.frag.String()
			if strings.TrimSpace(in) == "" {
				in = "{}"
			}
			if !json.Valid([]byte(in)) {
				if a.stop == types.StopReasonMaxTokens {
					continue // the output cap cut the call off
				}
				return nil, fmt.Errorf("bedrock: malformed stream: tool_use %s input is not JSON: %q", b.b.ID, in)
			}
			b.b.Input = json.RawMessage(in)
		}
		msg.Content = append(msg.Content, b.b)
	}
	return &llm.Response{Message: msg, StopReason: stopReason(a.stop), ProviderStopReason: string(a.stop),
		Usage: usage(a.usage), Model: model}, nil
}

// bodyWatcher is the HTTP client the SDK sends through. It does two things:
//
//   - It hides the io.WriterTo of every request body (see requestBody), so
//     the SDK closing that body early cannot make net/http close the
//     connection under a response still being read.
//   - For Stream requests it records the response body's read error: the
//     SDK's event-stream reader ends its event channel without an error
//     when the body breaks off mid-message, so a cut stream would look
//     complete; Stream checks the recorded error.
type bodyWatcher struct{ next aws.HTTPClient }

type bodyErrKey struct{}

// bodyErrSlot holds the first read error of a request's response body.
type bodyErrSlot struct {
	mu  sync.Mutex
	err error
}

func watchBody(ctx context.Context) context.Context {
	return context.WithValue(ctx, bodyErrKey{}, &bodyErrSlot{})
}

func bodyErr(ctx context.Context) error {
	if s, ok := ctx.Value(bodyErrKey{}).(*bodyErrSlot); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.err
	}
	return nil
}

// Do sends r (its body wrapped as requestBody) and, for Stream requests,
// wraps the response body to record its read error.
func (w bodyWatcher) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		rr := *r // the SDK keeps r and closes r.Body itself
		rr.Body = requestBody{r.Body}
		r = &rr
	}
	resp, err := w.next.Do(r)
	if s, ok := r.Context().Value(bodyErrKey{}).(*bodyErrSlot); ok && err == nil {
		resp.Body = &watchedBody{ReadCloser: resp.Body, slot: s}
	}
	return resp, err
}

// requestBody is a request body with only Read and Close: it hides the
// io.WriterTo of the SDK's body.
//
// smithy-go's ClientHandler.Handle (transport/http/client.go, v1.28.8 and
// v1.28.9) closes the request body as soon as the HTTP client returns,
// i.e. when the response headers arrive, and its closed body
// (safeWriteToReadCloser, transport/http/internal/io/safe.go) then answers
// WriteTo with (0, io.EOF). net/http's write loop, after sending the
// Content-Length bytes, copies the rest of the body to io.Discard to check
// for extra bytes (transfer.go, transferWriter.writeBody), and io.Copy
// prefers WriteTo. A server answers once it has the Content-Length bytes,
// so that check can run after the SDK's close: io.Copy returns the io.EOF
// from WriteTo as an error, the write loop takes it for a failed write and
// closes the connection while the response is still being read
// ("decode event: read tcp ...: use of closed network connection").
// Through Read, the closed body returns (0, io.EOF), which io.Copy takes
// for the clean end it is, so the check passes whichever side runs first.
type requestBody struct{ io.ReadCloser }

type watchedBody struct {
	io.ReadCloser
	slot *bodyErrSlot
}

// Read reads from the body, recording the first error that is not io.EOF.
func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.slot.mu.Lock()
		if b.slot.err == nil {
			b.slot.err = err
		}
		b.slot.mu.Unlock()
	}
	return n, err
}

// stopReason maps Bedrock's stopReason.
func stopReason(s types.StopReason) llm.StopReason {
	switch s {
	case types.StopReasonToolUse:
		return llm.StopToolUse
	case types.StopReasonMaxTokens:
		return llm.StopMaxTokens
	case types.StopReasonStopSequence:
		return llm.StopSequence
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		return llm.StopRefusal
	case types.StopReasonModelContextWindowExceeded:
		return llm.StopContextWindow
	}
	return llm.StopEndTurn
}

// usage maps Bedrock token usage: inputTokens are the uncached input
// (Bedrock docs, "Prompt caching": cache reads and writes are reported
// separately from inputTokens).
func usage(u *types.TokenUsage) llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	return llm.Usage{Input: int64(aws.ToInt32(u.InputTokens)), Output: int64(aws.ToInt32(u.OutputTokens)),
		CacheRead: int64(aws.ToInt32(u.CacheReadInputTokens)), CacheWrite: int64(aws.ToInt32(u.CacheWriteInputTokens)),
		Total: int64(aws.ToInt32(u.TotalTokens))}
}

// converse is the non-streaming path.
func (p *Provider) converse(ctx context.Context, in *bedrockruntime.ConverseStreamInput, onDelta func(llm.Delta)) (*llm.Response, error) {
	out, err := p.client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: in.ModelId, Messages: in.Messages, System: in.System,
		ToolConfig: in.ToolConfig, InferenceConfig: in.InferenceConfig, AdditionalModelRequestFields: in.AdditionalModelRequestFields})
	if err != nil {
		return nil, wrapError(ctx, err)
	}
	m, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, errors.New("bedrock: Converse returned no message")
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	for _, c := range m.Value.Content {
		switch c := c.(type) {
		case *types.ContentBlockMemberText:
			msg.Content = append(msg.Content, llm.TextBlock(c.Value))
		case *types.ContentBlockMemberToolUse:
			raw := []byte("{}")
			if c.Value.Input != nil {
				if raw, err = c.Value.Input.MarshalSmithyDocument(); err != nil {
					return nil, fmt.Errorf("bedrock: toolUse %s input: %w", aws.ToString(c.Value.ToolUseId), err)
				}
			}
			msg.Content = append(msg.Content, llm.ToolUseBlock(aws.ToString(c.Value.ToolUseId), aws.ToString(c.Value.Name), raw))
		case *types.ContentBlockMemberReasoningContent:
			switch r := c.Value.(type) {
			case *types.ReasoningContentBlockMemberReasoningText:
				msg.Content = append(msg.Content, llm.Block{Type: llm.BlockThinking, Text: aws.ToString(r.Value.Text), Signature: aws.ToString(r.Value.Signature)})
			case *types.ReasoningContentBlockMemberRedactedContent:
				msg.Content = append(msg.Content, llm.Block{Type: llm.BlockRedactedThinking, Data: r.Value})
			}
		}
	}
	llm.ReplayDeltas(msg, onDelta)
	return &llm.Response{Message: msg, StopReason: stopReason(out.StopReason), ProviderStopReason: string(out.StopReason),
		Usage: usage(out.Usage), Model: aws.ToString(in.ModelId)}, nil
}

// wrapError maps SDK errors: an HTTP or stream exception → *llm.APIError
// (status, error code as Type, message, request id, retry-after).
func wrapError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var api smithy.APIError
	if !errors.As(err, &api) {
		return fmt.Errorf("bedrock: %w", err)
	}
	ae := &llm.APIError{Provider: ProviderName, Type: api.ErrorCode(), Message: api.ErrorMessage()}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		ae.StatusCode, ae.RequestID = re.HTTPStatusCode(), re.ServiceRequestID()
		if re.Response != nil {
			ae.RetryAfter, _ = limit.RetryAfter(re.Response.Header, time.Now())
		}
	}
	return ae
}
