package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/internal/limit"
)

// Chat is an llm.Provider on the Chat Completions API (POST
// {BaseURL}/chat/completions), for OpenAI and OpenAI-compatible servers.
// It is safe for concurrent use.
type Chat struct {
	cfg    Config
	name   string
	client openai.Client
	limit  *limit.Limiter
}

// NewChat returns a Chat Completions provider. Name() is cfg.Name, or
// "openai-chat" when empty.
func NewChat(cfg Config) *Chat {
	c := &Chat{cfg: cfg, name: cfg.name("openai-chat")}
	c.client, c.limit = newClient(cfg, c.name)
	return c
}

// Name returns the provider id (Config.Name, default "openai-chat").
func (c *Chat) Name() string { return c.name }

// API returns llm.APIOpenAIChat.
func (c *Chat) API() llm.API { return llm.APIOpenAIChat }

// Stream sends req (mapped as "Chat Completions mapping" in the package
// documentation says; a request that cannot be mapped is an error before
// anything is sent) and returns the assistant message of choice 0 (other choices, requested with n>1, are not modeled).
//
// Response mapping: reasoning text (DeepSeek/Qwen/xAI/Groq
// "reasoning_content", OpenRouter/Groq "reasoning", OpenRouter/Snowflake
// "reasoning_details", Mistral "thinking" content parts) → one thinking block without signature; content → one text
// block; refusal → one text block holding the refusal text, and StopReason
// refusal; tool calls → tool_use blocks (arguments must parse as a JSON
// object; "" counts as {}). Blocks are ordered by their first appearance in
// the stream; Delta.Index is the block's position. finish_reason stop →
// end_turn, tool_calls/function_call → tool_use, length → max_tokens,
// content_filter → refusal, anything else → end_turn; tool calls present
// always give tool_use (some compatible servers send "stop" with calls). The
// raw finish_reason is kept in ProviderStopReason. Usage comes from the last
// chunk carrying a usage object (compatible servers repeat cumulative usage
// on several chunks, so values are not summed): Input = prompt_tokens −
// prompt_tokens_details.cached_tokens, CacheRead = cached_tokens, Output =
// completion_tokens, Reasoning = completion_tokens_details.reasoning_tokens,
// Total recomputed.
//
// The stream is complete only when it ends with "data: [DONE]" (the Chat
// Completions terminal event, sent by every recorded server); a missing
// finish_reason alone is accepted (Snowflake Cortex never sends one) and
// then maps like "stop".
//
// Errors: *llm.APIError for HTTP errors and in-stream {"error":…} chunks; an
// error wrapping llm.ErrStreamTruncated for a stream that ends without
// "data: [DONE]" (even after a finish_reason: the usage chunk would be lost)
// or whose connection drops; an *llm.LimitError when a limit of
// Config.Limits ended the call; ctx.Err() when ctx ends.
func (c *Chat) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	return c.limit.Call(ctx, func(ctx context.Context) (*llm.Response, error) { return c.stream(ctx, req, onDelta) })
}

// stream is Stream within the call's limits.
func (c *Chat) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	params, err := chatParams(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, llm.InvalidRequest(err))
	}
	if c.cfg.NonStreaming {
		cc, err := c.client.Chat.Completions.New(ctx, params)
		if err != nil {
			return nil, mapError(ctx, c.name, err, false)
		}
		return chatFromCompletion(c.name, cc, onDelta)
	}
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	end := &streamEnd{}
	stream := c.client.Chat.Completions.NewStreaming(context.WithValue(ctx, endKey{}, end), params)
	defer stream.Close()
	a := newChatAssembler(c.name, onDelta)
	for stream.Next() {
		if err := a.add(stream.Current()); err != nil {
			return nil, err
		}
	}
	if err := stream.Err(); err != nil {
		return nil, mapError(ctx, c.name, err, a.chunks > 0 || errors.Is(err, io.ErrUnexpectedEOF))
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !end.done {
		return nil, truncated(c.name, "stream ended after %d chunks without data: [DONE] (finish_reason %q)", a.chunks, a.finish)
	}
	return a.response()
}

// chatBlock is one content block being assembled, keyed by kind.
type chatBlock struct {
	kind string // "thinking", "text", "refusal", "tool"
	tool int    // tool call index for kind "tool"
	text strings.Builder
}

// chatAssembler turns Chat Completions chunks (choice 0) into deltas and
// the final response. Tool calls are merged by the SDK's
// ChatCompletionAccumulator; text, refusal and reasoning by the assembler
// (the accumulator knows neither reasoning fields nor Mistral content parts).
type chatAssembler struct {
	provider string
	onDelta  func(llm.Delta)
	acc      openai.ChatCompletionAccumulator
	blocks   []*chatBlock
	byKey    map[string]int
	finish   string
	usage    *openai.CompletionUsage
	chunks   int
	id       string
	model    string
}

func newChatAssembler(provider string, onDelta func(llm.Delta)) *chatAssembler {
	return &chatAssembler{provider: provider, onDelta: onDelta, byKey: map[string]int{}}
}

func (a *chatAssembler) block(kind string, tool int) (int, *chatBlock) {
	key := kind
	if kind == "tool" {
		key = "tool:" + strconv.Itoa(tool)
	}
	if i, ok := a.byKey[key]; ok {
		return i, a.blocks[i]
	}
	b := &chatBlock{kind: kind, tool: tool}
	a.blocks = append(a.blocks, b)
	a.byKey[key] = len(a.blocks) - 1
	return len(a.blocks) - 1, b
}

func (a *chatAssembler) text(kind, s string) {
	if s == "" {
		return
	}
	i, b := a.block(kind, 0)
	b.text.WriteString(s)
	t := llm.DeltaText
	if kind == "thinking" {
		t = llm.DeltaThinking
	}
	emit(a.onDelta, llm.Delta{Type: t, Index: i, Text: s})
}

func (a *chatAssembler) add(ch openai.ChatCompletionChunk) error {
	a.chunks++
	if a.chunks == 1 {
		a.id = ch.ID
	}
	// Groq compound sends a new id on every chunk; the accumulator rejects an
	// id change, so every chunk is accumulated under the first id.
	ch.ID = a.id
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.JSON.Usage.Valid() {
		u := ch.Usage
		a.usage = &u
	}
	// Only choice 0 is modeled; drop the others before accumulating.
	var choice *openai.ChatCompletionChunkChoice
	for i := range ch.Choices {
		if ch.Choices[i].Index == 0 {
			choice = &ch.Choices[i]
		}
	}
	if choice == nil {
		ch.Choices = nil
	} else {
		ch.Choices = []openai.ChatCompletionChunkChoice{*choice}
	}
	ch.Usage = openai.CompletionUsage{}
	if !a.acc.AddChunk(ch) {
		return fmt.Errorf("%s: chunk %d (id %q) rejected by the SDK accumulator (changed id or invalid choice/tool index)", a.provider, a.chunks, ch.ID)
	}
	if choice == nil {
		return nil
	}
	d := choice.Delta
	a.text("thinking", reasoningText(d.JSON.ExtraFields))
	if err := a.content(d.Content, d.JSON.Content); err != nil {
		return err
	}
	a.text("refusal", d.Refusal)
	for _, tc := range d.ToolCalls {
		idx := int(tc.Index)
		if idx < 0 {
			idx = 0 // the accumulator's rule for servers that send -1
		}
		i, _ := a.block("tool", idx)
		calls := a.acc.Choices[0].Message.ToolCalls
		var id, name string
		if idx < len(calls) {
			id, name = calls[idx].ID, calls[idx].Function.Name
		}
		emit(a.onDelta, llm.Delta{Type: llm.DeltaToolCall, Index: i, Text: tc.Function.Arguments, ID: id, Name: name})
	}
	if choice.FinishReason != "" {
		a.finish = choice.FinishReason
	}
	return nil
}

// content handles delta/message content: a string, or (Mistral) an array of
// {"type":"text","text"} and {"type":"thinking","thinking":[{"text"}]} parts,
// read from the SDK's raw JSON of the field.
func (a *chatAssembler) content(s string, f respjson.Field) error {
	raw := strings.TrimSpace(f.Raw())
	if !strings.HasPrefix(raw, "[") {
		a.text("text", s)
		return nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking []struct {
			Text string `json:"text"`
		} `json:"thinking"`
	}
	if err := json.Unmarshal([]byte(raw), &parts); err != nil {
		return fmt.Errorf("%s: content parts: %w", a.provider, err)
	}
	for _, p := range parts {
		switch p.Type {
		case "text":
			a.text("text", p.Text)
		case "thinking":
			for _, t := range p.Thinking {
				a.text("thinking", t.Text)
			}
		}
	}
	return nil
}

// reasoningText returns the reasoning fragment of a delta or message:
// "reasoning_content" (DeepSeek, Qwen, xAI, Moonshot, Z.ai), else
// "reasoning" (OpenRouter, Groq) when it is a non-empty JSON string, else
// the "text" (type reasoning.text) or "summary" (type reasoning.summary) of
// the "reasoning_details" array (OpenRouter, Snowflake Cortex).
func reasoningText(extra map[string]respjson.Field) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := extra[k] // extra fields are never Valid(); read the raw JSON
		if !ok || f.Raw() == "" || f.Raw() == "null" {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	f, ok := extra["reasoning_details"]
	if !ok || f.Raw() == "" || f.Raw() == "null" {
		return ""
	}
	var details []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Summary string `json:"summary"`
	}
	if json.Unmarshal([]byte(f.Raw()), &details) != nil {
		return ""
	}
	var b strings.Builder
	for _, d := range details {
		switch d.Type {
		case "reasoning.text":
			b.WriteString(d.Text)
		case "reasoning.summary":
			b.WriteString(d.Summary)
		}
	}
	return b.String()
}

func (a *chatAssembler) response() (*llm.Response, error) {
	var calls []openai.ChatCompletionMessageToolCallUnion
	if len(a.acc.Choices) > 0 {
		calls = a.acc.Choices[0].Message.ToolCalls
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: make([]llm.Block, 0, len(a.blocks))}
	refusal := false
	for _, b := range a.blocks {
		switch b.kind {
		case "thinking":
			msg.Content = append(msg.Content, llm.Block{Type: llm.BlockThinking, Text: b.text.String()})
		case "text":
			msg.Content = append(msg.Content, llm.TextBlock(b.text.String()))
		case "refusal":
			refusal = true
			msg.Content = append(msg.Content, llm.TextBlock(b.text.String()))
		case "tool":
			if b.tool >= len(calls) {
				return nil, fmt.Errorf("%s: tool call %d missing from the accumulated message", a.provider, b.tool)
			}
			blk, err := toolUse(a.provider, calls[b.tool].ID, calls[b.tool].Function.Name, calls[b.tool].Function.Arguments)
			if err != nil {
				return nil, err
			}
			msg.Content = append(msg.Content, blk)
		}
	}
	r := &llm.Response{Message: msg, ID: a.id, Model: a.model, ProviderStopReason: a.finish}
	r.StopReason = chatStop(a.finish, len(msg.ToolUses()) > 0, refusal)
	if a.usage != nil {
		r.Usage = chatUsage(*a.usage)
	}
	return r, nil
}

// toolUse builds a tool_use block from a call's id, name and JSON argument
// text; "" means {}. Arguments that are not a JSON object are an error.
func toolUse(provider, id, name, args string) (llm.Block, error) {
	if id == "" || name == "" {
		return llm.Block{}, fmt.Errorf("%s: tool call without id or name (id=%q name=%q)", provider, id, name)
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return llm.Block{}, fmt.Errorf("%s: tool call %s (%s) arguments are not a JSON object: %.120s", provider, id, name, args)
	}
	return llm.ToolUseBlock(id, name, json.RawMessage(args)), nil
}

// chatStop maps a finish_reason (see Chat.Stream).
func chatStop(finish string, hasTools, refusal bool) llm.StopReason {
	switch {
	case finish == "length":
		return llm.StopMaxTokens
	case finish == "content_filter" || refusal:
		return llm.StopRefusal
	case hasTools || finish == "tool_calls" || finish == "function_call":
		return llm.StopToolUse
	}
	return llm.StopEndTurn
}

// chatUsage maps Chat Completions usage (see Chat.Stream).
func chatUsage(u openai.CompletionUsage) llm.Usage {
	cached := u.PromptTokensDetails.CachedTokens
	return llm.Usage{
		Input:     max(u.PromptTokens-cached, 0),
		CacheRead: cached,
		Output:    u.CompletionTokens,
		Reasoning: u.CompletionTokensDetails.ReasoningTokens,
	}.WithTotal()
}

// chatFromCompletion maps a non-streaming ChatCompletion (choice 0) and
// emits its content as deltas in block order.
func chatFromCompletion(provider string, cc *openai.ChatCompletion, onDelta func(llm.Delta)) (*llm.Response, error) {
	var choice *openai.ChatCompletionChoice
	for i := range cc.Choices {
		if cc.Choices[i].Index == 0 {
			choice = &cc.Choices[i]
			break
		}
	}
	if choice == nil {
		return nil, fmt.Errorf("%s: response %q has no choice 0", provider, cc.ID)
	}
	a := newChatAssembler(provider, onDelta)
	m := choice.Message
	a.text("thinking", reasoningText(m.JSON.ExtraFields))
	if err := a.content(m.Content, m.JSON.Content); err != nil {
		return nil, err
	}
	a.text("refusal", m.Refusal)
	msg := llm.Message{Role: llm.RoleAssistant}
	refusal := false
	for _, b := range a.blocks {
		switch b.kind {
		case "thinking":
			msg.Content = append(msg.Content, llm.Block{Type: llm.BlockThinking, Text: b.text.String()})
		case "refusal":
			refusal = true
			msg.Content = append(msg.Content, llm.TextBlock(b.text.String()))
		default:
			msg.Content = append(msg.Content, llm.TextBlock(b.text.String()))
		}
	}
	calls := m.ToolCalls
	for _, tc := range calls {
		blk, err := toolUse(provider, tc.ID, tc.Function.Name, tc.Function.Arguments)
		if err != nil {
			return nil, err
		}
		emit(onDelta, llm.Delta{Type: llm.DeltaToolCall, Index: len(msg.Content), Text: tc.Function.Arguments, ID: tc.ID, Name: tc.Function.Name})
		msg.Content = append(msg.Content, blk)
	}
	if msg.Content == nil {
		msg.Content = []llm.Block{}
	}
	r := &llm.Response{Message: msg, ID: cc.ID, Model: cc.Model, ProviderStopReason: choice.FinishReason}
	r.StopReason = chatStop(choice.FinishReason, len(calls) > 0, refusal)
	if cc.JSON.Usage.Valid() {
		r.Usage = chatUsage(cc.Usage)
	}
	return r, nil
}
