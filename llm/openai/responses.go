package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/internal/limit"
)

// Responses is an llm.Provider on the Responses API (POST
// {BaseURL}/responses). It is safe for concurrent use.
type Responses struct {
	cfg    Config
	name   string
	client responsesClient
	limit  *limit.Limiter
}

type responsesClient = responses.ResponseService

// NewResponses returns a Responses API provider. Name() is cfg.Name, or
// "openai-responses" when empty.
func NewResponses(cfg Config) *Responses {
	r := &Responses{cfg: cfg, name: cfg.name("openai-responses")}
	c, lim := newClient(cfg, r.name)
	r.client, r.limit = c.Responses, lim
	return r
}

// Name returns the provider id (Config.Name, default "openai-responses").
func (r *Responses) Name() string { return r.name }

// API returns llm.APIOpenAIResponses.
func (r *Responses) API() llm.API { return llm.APIOpenAIResponses }

// Stream sends req (mapped as "Responses mapping" in the package
// documentation says; a request that cannot be mapped is an error before
// anything is sent) and returns the final assistant message, built from the output of the terminal
// response.completed / response.incomplete event (or, for NonStreaming, the
// response body).
//
// Output items → blocks, in output order: reasoning → thinking (ItemID = id,
// Signature = encrypted_content, Text = the summary texts joined with blank
// lines, or the reasoning_text contents when there is no summary); message →
// one text block (ItemID = id) with its output_text and refusal parts
// concatenated; function_call → tool_use (ID = call_id, ItemID = id, Name,
// Input = arguments, which must be a JSON object; "" counts as {}). Other
// items (built-in tool calls: web_search_call, code_interpreter_call, mcp_*,
// …) are not modeled and skipped. Deltas: response.output_text.delta and
// response.refusal.delta → text, response.reasoning_summary_text.delta and
// response.reasoning_text.delta → thinking (a "\n\n" delta separates summary
// parts), response.function_call_arguments.delta → tool_call with the call's
// id and name; Delta.Index is the block's position as announced by
// response.output_item.added.
//
// Stop: status completed → tool_use when a function_call is in the output,
// else end_turn (refusal when a refusal part is); incomplete with reason
// max_output_tokens → max_tokens, content_filter → refusal, other reasons
// → end_turn. ProviderStopReason is the status, or the incomplete reason.
// Usage: Input = input_tokens − input_tokens_details.cached_tokens,
// CacheRead = cached_tokens, Output = output_tokens, Reasoning =
// output_tokens_details.reasoning_tokens, Total recomputed.
//
// Errors: *llm.APIError for HTTP errors, an "error" event, or
// response.failed (Type/Code/Message from response.error, e.g.
// insufficient_quota); an error wrapping llm.ErrStreamTruncated when the
// stream ends before response.completed/incomplete/failed or the connection
// drops; an *llm.LimitError when a limit of Config.Limits ended the call;
// ctx.Err() when ctx ends.
func (r *Responses) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	return r.limit.Call(ctx, func(ctx context.Context) (*llm.Response, error) { return r.stream(ctx, req, onDelta) })
}

// stream is Stream within the call's limits.
func (r *Responses) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	params, err := responsesParams(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.name, llm.InvalidRequest(err))
	}
	if r.cfg.NonStreaming {
		resp, err := r.client.New(ctx, params)
		if err != nil {
			return nil, mapError(ctx, r.name, err, false)
		}
		return responseFrom(r.name, resp, nil, onDelta)
	}
	stream := r.client.NewStreaming(ctx, params)
	defer stream.Close()
	a := &respAssembler{provider: r.name, onDelta: onDelta, index: map[int64]int{}, items: map[int64]responses.ResponseOutputItemUnion{}, lastSummary: map[int64]int64{}}
	var final *responses.Response
	events := 0
	for final == nil && stream.Next() {
		events++
		ev := stream.Current()
		switch ev.Type {
		case "response.completed", "response.incomplete":
			resp := ev.Response
			final = &resp
		case "response.failed":
			return nil, failedError(r.name, &ev.Response)
		case "error":
			return nil, &llm.APIError{Provider: r.name, Type: "error", Code: ev.Code, Message: ev.Message}
		default:
			a.event(ev)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, mapError(ctx, r.name, err, events > 0 || errors.Is(err, io.ErrUnexpectedEOF))
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if final == nil {
		return nil, truncated(r.name, "stream ended after %d events without response.completed", events)
	}
	return responseFrom(r.name, final, a, nil)
}

// respAssembler follows a Responses event stream to emit deltas with the
// right block index.
type respAssembler struct {
	provider    string
	onDelta     func(llm.Delta)
	index       map[int64]int                               // output_index → block index
	items       map[int64]responses.ResponseOutputItemUnion // announced / finished items
	order       []int64                                     // output indexes in announcement order
	lastSummary map[int64]int64                             // output_index → last reasoning part index seen + 1
	blocks      int
	emitted     map[int]*strings.Builder // block index → fragments sent so far
}

// emit sends a delta and remembers its text for responseFrom's catch-up.
func (a *respAssembler) emit(d llm.Delta) {
	if a.emitted == nil {
		a.emitted = map[int]*strings.Builder{}
	}
	if a.emitted[d.Index] == nil {
		a.emitted[d.Index] = &strings.Builder{}
	}
	a.emitted[d.Index].WriteString(d.Text)
	emit(a.onDelta, d)
}

func (a *respAssembler) sent(i int) string {
	if a == nil || a.emitted[i] == nil {
		return ""
	}
	return a.emitted[i].String()
}

// modeled reports whether an output item type becomes a block.
func modeled(t string) bool { return t == "message" || t == "reasoning" || t == "function_call" }

func (a *respAssembler) blockOf(out int64) int {
	if i, ok := a.index[out]; ok {
		return i
	}
	a.index[out] = a.blocks
	a.blocks++
	return a.index[out]
}

func (a *respAssembler) event(ev responses.ResponseStreamEventUnion) {
	switch ev.Type {
	case "response.output_item.added":
		if modeled(ev.Item.Type) {
			a.blockOf(ev.OutputIndex)
			if _, ok := a.items[ev.OutputIndex]; !ok {
				a.order = append(a.order, ev.OutputIndex)
			}
			a.items[ev.OutputIndex] = ev.Item
		}
	case "response.output_item.done":
		if modeled(ev.Item.Type) {
			if _, ok := a.items[ev.OutputIndex]; !ok {
				a.order = append(a.order, ev.OutputIndex)
				a.blockOf(ev.OutputIndex)
			}
			a.items[ev.OutputIndex] = ev.Item
		}
	case "response.output_text.delta", "response.refusal.delta":
		a.emit(llm.Delta{Type: llm.DeltaText, Index: a.blockOf(ev.OutputIndex), Text: ev.Delta})
	case "response.reasoning_summary_text.delta":
		a.thinking(ev.OutputIndex, ev.SummaryIndex, ev.Delta)
	case "response.reasoning_text.delta":
		a.thinking(ev.OutputIndex, ev.ContentIndex, ev.Delta)
	case "response.function_call_arguments.delta":
		it := a.items[ev.OutputIndex]
		a.emit(llm.Delta{Type: llm.DeltaToolCall, Index: a.blockOf(ev.OutputIndex), Text: ev.Delta, ID: it.CallID, Name: it.Name})
	}
}

// thinking emits a reasoning fragment of part part (summary_index or
// content_index) of the item at out, preceded by a "\n\n" delta when a new
// part starts after an earlier one (reasoningItemText joins parts so).
func (a *respAssembler) thinking(out, part int64, text string) {
	i := a.blockOf(out)
	if last := a.lastSummary[out]; last != part+1 {
		if last > 0 {
			a.emit(llm.Delta{Type: llm.DeltaThinking, Index: i, Text: "\n\n"})
		}
		a.lastSummary[out] = part + 1
	}
	a.emit(llm.Delta{Type: llm.DeltaThinking, Index: i, Text: text})
}

// failedError maps a failed response's error object.
func failedError(provider string, resp *responses.Response) *llm.APIError {
	e := resp.Error
	ae := &llm.APIError{Provider: provider, Code: string(e.Code), Type: e.Type, Message: e.Message}
	if ae.Type == "" {
		ae.Type = string(e.Code)
	}
	if ae.Message == "" {
		ae.Message = "response " + resp.ID + " failed"
	}
	return ae
}

// responseFrom builds the llm.Response from a final Response. When the
// final output is empty but the stream announced items (some compatible
// servers), the streamed items are used. Content not yet sent as deltas is
// emitted here: everything for a non-streaming response (a == nil), and for
// a stream the rest of any block whose streamed fragments are a strict
// prefix of its final text (servers that stream only part of an item, e.g.
// LM Studio's function_call arguments, which arrive whole in
// output_item.done).
func responseFrom(provider string, resp *responses.Response, a *respAssembler, onDelta func(llm.Delta)) (*llm.Response, error) {
	if resp.Status == "failed" {
		return nil, failedError(provider, resp)
	}
	output := resp.Output
	if len(output) == 0 && a != nil && len(a.order) > 0 {
		for _, oi := range a.order {
			output = append(output, a.items[oi])
		}
	}
	if a != nil {
		onDelta = a.onDelta
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{}}
	refusal := false
	for _, it := range output {
		var blk llm.Block
		var d llm.Delta
		switch it.Type {
		case "reasoning":
			blk = llm.Block{Type: llm.BlockThinking, ItemID: it.ID, Signature: it.EncryptedContent, Text: reasoningItemText(it)}
			d = llm.Delta{Type: llm.DeltaThinking, Text: blk.Text}
		case "message":
			var b strings.Builder
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					b.WriteString(c.Text)
				case "refusal":
					refusal = true
					b.WriteString(c.Refusal)
				}
			}
			blk = llm.TextBlock(b.String())
			blk.ItemID = it.ID
			d = llm.Delta{Type: llm.DeltaText, Text: blk.Text}
		case "function_call":
			args := it.Arguments.OfString
			var err error
			if blk, err = toolUse(provider, it.CallID, it.Name, args); err != nil {
				return nil, err
			}
			blk.ItemID = it.ID
			d = llm.Delta{Type: llm.DeltaToolCall, Text: args, ID: it.CallID, Name: it.Name}
		default:
			continue
		}
		d.Index = len(msg.Content)
		if prev := a.sent(d.Index); strings.HasPrefix(d.Text, prev) && (len(d.Text) > len(prev) || (a == nil && d.Type == llm.DeltaToolCall)) {
			d.Text = d.Text[len(prev):]
			emit(onDelta, d)
		}
		msg.Content = append(msg.Content, blk)
	}
	out := &llm.Response{Message: msg, ID: resp.ID, Model: string(resp.Model), ProviderStopReason: string(resp.Status)}
	switch {
	case resp.Status == "incomplete":
		out.ProviderStopReason = resp.IncompleteDetails.Reason
		switch resp.IncompleteDetails.Reason {
		case "max_output_tokens":
			out.StopReason = llm.StopMaxTokens
		case "content_filter":
			out.StopReason = llm.StopRefusal
		default:
			out.StopReason = llm.StopEndTurn
		}
	case refusal:
		out.StopReason = llm.StopRefusal
	case len(msg.ToolUses()) > 0:
		out.StopReason = llm.StopToolUse
	default:
		out.StopReason = llm.StopEndTurn
	}
	u := resp.Usage
	cached := u.InputTokensDetails.CachedTokens
	out.Usage = llm.Usage{
		Input:     max(u.InputTokens-cached, 0),
		CacheRead: cached,
		Output:    u.OutputTokens,
		Reasoning: u.OutputTokensDetails.ReasoningTokens,
	}.WithTotal()
	return out, nil
}

// reasoningItemText joins a reasoning item's summary texts with blank
// lines, or its reasoning_text contents when it has no summary.
func reasoningItemText(it responses.ResponseOutputItemUnion) string {
	var parts []string
	for _, s := range it.Summary {
		parts = append(parts, s.Text)
	}
	if len(parts) == 0 {
		for _, c := range it.Content {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
