package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/internal/limit"
)

// ProviderName is the id Name returns and APIError.Provider carries.
const ProviderName = "anthropic"

// Config configures a Provider.
type Config struct {
	APIKey string // sent as the x-api-key header
	// BaseURL is the API root, e.g. "http://127.0.0.1:43127"; "" = the SDK
	// default (https://api.anthropic.com). ANTHROPIC_BASE_URL is read by the
	// CLI, never here.
	BaseURL string
	// HTTPClient carries the requests; nil = http.DefaultClient.
	// `strata render` passes one with a recording RoundTripper.
	HTTPClient *http.Client
	// MaxRetries is how many times a request is sent again after a 408,
	// 409, 429 or 5xx answer or a connection error, before any byte is
	// streamed (llm.Limits gives the policy; the SDK's own retries are off);
	// 0 = none (tests). The CLI sets 2.
	MaxRetries int
	// Limits bound the idle wait, the honoured retry delay and the whole
	// call (llm.Limits; the zero value applies the defaults).
	Limits llm.Limits
	// NonStreaming uses Messages.New instead of Messages.NewStreaming; Stream
	// then reports the final message's content as deltas in one go, one per
	// block.
	NonStreaming bool
}

// Provider talks to the Anthropic Messages API. It is safe for concurrent use.
type Provider struct {
	client sdk.Client
	cfg    Config
	limit  *limit.Limiter
}

// New returns a provider for cfg. It reads no environment variables and no
// SDK profile files: the SDK client is built with
// option.WithoutEnvironmentDefaults (which turns off the SDK's reading of
// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, profiles, …) and exactly the key,
// base URL and HTTP client given (option.WithAPIKey, WithBaseURL,
// WithHTTPClient), with the SDK's retries off (WithMaxRetries(0)): the HTTP
// client applies cfg.MaxRetries and cfg.Limits. An empty APIKey sends no
// x-api-key header (the API then answers 401).
func New(cfg Config) *Provider {
	lim := limit.New(limit.Options{Provider: ProviderName, Limits: cfg.Limits, MaxRetries: cfg.MaxRetries, Streaming: !cfg.NonStreaming})
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0),
		option.WithHTTPClient(lim.Client(cfg.HTTPClient))}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &Provider{client: sdk.NewClient(opts...), cfg: cfg, limit: lim}
}

// Name returns "anthropic".
func (p *Provider) Name() string { return ProviderName }

// API returns llm.APIAnthropic.
func (p *Provider) API() llm.API { return llm.APIAnthropic }

// Stream sends req to POST /v1/messages and streams the answer (see
// llm.Provider for the contract).
//
// Deltas: text_delta → llm.DeltaText, thinking_delta → llm.DeltaThinking,
// input_json_delta of a client tool_use → llm.DeltaToolCall with the call's
// ID and Name; Index is the block's position in the returned message (server
// blocks are not counted). Content a block carries at its start (or complete
// blocks inside message_start) is reported as one fragment, and a tool call
// none of whose input streamed is reported whole at its content_block_stop,
// so a kept block's fragments always concatenate to its final content. Empty
// fragments and signature/citation deltas are not reported.
//
// Errors: a mapping error naming the field (see "Request mapping" in the
// package documentation) before anything is sent; *llm.APIError for an HTTP status ≥ 400
// or an in-stream `event: error`; an error wrapping llm.ErrStreamTruncated
// when the stream ends (cleanly or by a cut connection) after message_start
// but before message_stop; a "malformed stream" error for events the
// accumulator rejects, a second message_start or an unparseable tool input;
// an *llm.LimitError when a limit of Config.Limits ended the call;
// ctx.Err() when ctx is cancelled.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	return p.limit.Call(ctx, func(ctx context.Context) (*llm.Response, error) { return p.stream(ctx, req, onDelta) })
}

// stream is Stream within the call's limits.
func (p *Provider) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	mp, err := params(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", llm.InvalidRequest(err))
	}
	if onDelta == nil {
		onDelta = func(llm.Delta) {}
	}
	if p.cfg.NonStreaming {
		msg, err := p.client.Messages.New(ctx, mp)
		if err != nil {
			return nil, wrapError(ctx, err, false)
		}
		resp, err := response(msg, nil)
		if err != nil {
			return nil, err
		}
		llm.ReplayDeltas(resp.Message, onDelta)
		return resp, nil
	}
	stream := p.client.Messages.NewStreaming(ctx, mp)
	defer stream.Close()
	var (
		acc     sdk.Message
		started bool
		stopped bool
		blocks  []streamBlock // per SDK content index
		// texts holds the text and thinking deltas per content index, kept
		// out of the SDK's accumulator: Message.Accumulate appends with
		// string +=, which copies the whole text for every delta (quadratic
		// in the answer's length).
		texts = blockTexts{}
	)
	for !stopped && stream.Next() {
		ev := stream.Current()
		if ev.Type == "message_start" {
			if started {
				return nil, fmt.Errorf("anthropic: malformed stream: a second message_start (id %q) inside one response", ev.Message.ID)
			}
			started = true
		}
		if !started {
			return nil, fmt.Errorf("anthropic: malformed stream: %s event before message_start", ev.Type)
		}
		markCut(ev, &acc, blocks)
		if own, err := texts.add(ev, len(acc.Content)); err != nil {
			return nil, fmt.Errorf("anthropic: malformed stream: %w", err)
		} else if !own {
			if err := acc.Accumulate(ev); err != nil {
				return nil, fmt.Errorf("anthropic: malformed stream: %w", err)
			}
		}
		switch ev.Type {
		case "message_start":
			// Blocks may arrive complete inside message_start (programmatic
			// tool calling): report them whole.
			for _, cb := range acc.Content {
				blocks = append(blocks, newStreamBlock(cb.Type, cb.ID, cb.Name, blocks))
				blocks[len(blocks)-1].start(cb.Text, cb.Thinking, cb.Input, onDelta)
				blocks[len(blocks)-1].finish(cb.Input, onDelta)
			}
		case "content_block_start":
			cb := acc.Content[ev.Index] // accumulated: Input is raw JSON
			blocks = append(blocks, newStreamBlock(cb.Type, cb.ID, cb.Name, blocks))
			blocks[len(blocks)-1].start(cb.Text, cb.Thinking, cb.Input, onDelta)
		case "content_block_delta":
			blocks[ev.Index].delta(ev.Delta, onDelta)
		case "content_block_stop":
			blocks[ev.Index].finish(acc.Content[ev.Index].Input, onDelta)
		case "message_stop":
			for i := range blocks {
				blocks[i].finish(acc.Content[i].Input, onDelta)
			}
			stopped = true // the response is complete: stop reading (Close drops the rest)
		}
	}
	if err := stream.Err(); err != nil && !stopped {
		return nil, wrapError(ctx, err, started)
	}
	if !stopped {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !started {
			return nil, fmt.Errorf("anthropic: %w (empty stream: no message_start)", llm.ErrStreamTruncated)
		}
		return nil, fmt.Errorf("anthropic: %w (no message_stop after %d content blocks)", llm.ErrStreamTruncated, len(acc.Content))
	}
	texts.apply(acc.Content)
	var cut []bool
	for _, b := range blocks {
		cut = append(cut, b.cut)
	}
	return response(&acc, cut)
}

// markCut records, before the accumulator sees a content_block_stop or
// message_stop, which tool_use blocks hold an input that is not a JSON
// object: Message.Accumulate silently replaces such a cut-off input with {}
// when the block is closed, which would turn an incomplete call into a call
// without arguments.
func markCut(ev sdk.MessageStreamEventUnion, acc *sdk.Message, blocks []streamBlock) {
	check := func(i int) {
		if i >= 0 && i < len(blocks) && i < len(acc.Content) && blocks[i].typ == "tool_use" && !isObject(acc.Content[i].Input) {
			blocks[i].cut = true
		}
	}
	switch ev.Type {
	case "content_block_stop":
		check(int(ev.Index))
	case "message_stop":
		for i := range blocks {
			check(i)
		}
	}
}

// streamBlock remembers, per content block of a stream, where its deltas go,
// so that each kept block's fragments concatenate to its final content.
type streamBlock struct {
	kept     bool // the block is part of the returned message
	index    int  // its index in the returned message (when kept)
	typ      string
	id, name string // tool_use only
	sent     bool   // tool_use: a fragment of its input was reported
	cut      bool   // tool_use: its input was not a JSON object when it closed
}

func newStreamBlock(typ, id, name string, prev []streamBlock) streamBlock {
	b := streamBlock{typ: typ, kept: keptBlock(typ), id: id, name: name}
	for _, p := range prev {
		if p.kept {
			b.index++
		}
	}
	return b
}

// start reports content a block already carries when it starts: text or
// thinking text, or a tool input other than the empty {} placeholder.
func (b *streamBlock) start(text, thinking string, input json.RawMessage, onDelta func(llm.Delta)) {
	switch b.typ {
	case "text":
		b.emit(llm.DeltaText, text, onDelta)
	case "thinking":
		b.emit(llm.DeltaThinking, thinking, onDelta)
	case "tool_use":
		if s := strings.TrimSpace(string(input)); s != "" && s != "{}" {
			b.emit(llm.DeltaToolCall, s, onDelta)
		}
	}
}

// delta reports one content_block_delta of a kept block.
func (b *streamBlock) delta(d sdk.MessageStreamEventUnionDelta, onDelta func(llm.Delta)) {
	switch {
	case d.Type == "text_delta" && b.typ == "text":
		b.emit(llm.DeltaText, d.Text, onDelta)
	case d.Type == "thinking_delta" && b.typ == "thinking":
		b.emit(llm.DeltaThinking, d.Thinking, onDelta)
	case d.Type == "input_json_delta" && b.typ == "tool_use":
		b.emit(llm.DeltaToolCall, d.PartialJSON, onDelta)
	}
}

// finish reports the whole input of a tool_use block none of whose input was
// reported yet (e.g. a call without arguments: "{}").
func (b *streamBlock) finish(input json.RawMessage, onDelta func(llm.Delta)) {
	if b.typ == "tool_use" && !b.sent {
		s := strings.TrimSpace(string(input))
		if s == "" {
			s = "{}"
		}
		b.emit(llm.DeltaToolCall, s, onDelta)
	}
}

func (b *streamBlock) emit(typ llm.DeltaType, text string, onDelta func(llm.Delta)) {
	if !b.kept || text == "" {
		return
	}
	d := llm.Delta{Type: typ, Index: b.index, Text: text}
	if typ == llm.DeltaToolCall {
		d.ID, d.Name = b.id, b.name
		b.sent = true
	}
	onDelta(d)
}

// keptBlock reports whether a response block of this type becomes part of
// the llm.Message (see the package comment).
func keptBlock(typ string) bool {
	switch typ {
	case "text", "thinking", "redacted_thinking", "tool_use":
		return true
	}
	return false
}

// blockTexts are the text and thinking deltas of a streamed message per
// content index, gathered in builders (linear in the answer).
type blockTexts map[int64]*blockText

type blockText struct{ text, thinking strings.Builder }

// add takes ev when it is a text or thinking delta of one of the n blocks
// started so far (own = true; the SDK's accumulator must not see it), and
// leaves every other event to the accumulator.
func (t blockTexts) add(ev sdk.MessageStreamEventUnion, n int) (own bool, err error) {
	if ev.Type != "content_block_delta" || (ev.Delta.Type != "text_delta" && ev.Delta.Type != "thinking_delta") {
		return false, nil
	}
	if ev.Index < 0 || ev.Index >= int64(n) {
		return true, fmt.Errorf("received %s for content block at index %d, but %d blocks were started", ev.Delta.Type, ev.Index, n)
	}
	b := t[ev.Index]
	if b == nil {
		b = &blockText{}
		t[ev.Index] = b
	}
	if ev.Delta.Type == "text_delta" {
		b.text.WriteString(ev.Delta.Text)
	} else {
		b.thinking.WriteString(ev.Delta.Thinking)
	}
	return true, nil
}

// apply appends the gathered text to the accumulated blocks (after the
// text their content_block_start carried).
func (t blockTexts) apply(content []sdk.ContentBlockUnion) {
	for i, b := range t {
		if i < int64(len(content)) {
			content[i].Text += b.text.String()
			content[i].Thinking += b.thinking.String()
		}
	}
}
