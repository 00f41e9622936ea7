package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/strata-agent/strata/llm"
)

// DefaultModel is the model name an authored reply reports when Reply.Model
// is empty.
const DefaultModel = "strata-replay"

// ErrInvalidReply is wrapped by every error Turn returns for a Reply the
// chosen wire API cannot carry (a block field it has no place for, usage it
// does not report, a stop reason it cannot express, …), so callers can test
// for it with errors.Is.
var ErrInvalidReply = errors.New("replay: reply cannot be authored")

// Reply is one assistant turn to author as a streamed provider response: what
// a model would have answered. The zero value of every field but Blocks has a
// default.
type Reply struct {
	// ID is the provider's response id: Anthropic message id ("msg_…"),
	// Chat Completions id ("chatcmpl-…"), Responses id ("resp_…"), Gemini
	// responseId. "" = "msg_replay", "chatcmpl-replay", "resp_replay",
	// "replay". Bedrock ConverseStream sends no response id: it is not
	// written.
	ID string
	// Model is the model name the response reports; "" = DefaultModel.
	// Bedrock ConverseStream sends no model name (the provider reports the
	// requested one): it is not written.
	Model string
	// Blocks is the assistant message content, in order: text, thinking and
	// tool_use blocks (llm.TextBlock, llm.ToolUseBlock, or a thinking block
	// with Text and an optional Signature). Each block is sent as one delta
	// (a tool_use input as one fragment of its JSON). A tool_use needs an ID
	// (except on Gemini, see Turn) and a Name; its Input must be a JSON
	// object ("" = {}).
	Blocks []llm.Block
	// Stop is the stop reason; "" = tool_use when Blocks hold a tool_use,
	// else end_turn. Every API takes end_turn, tool_use and max_tokens (see
	// Turn for the mapping and the others).
	Stop llm.StopReason
	// Usage is the token accounting the response reports, in tokens. Total
	// is ignored: the wire total is Input + CacheRead + CacheWrite + Output,
	// as llm.Usage.WithTotal computes it.
	Usage llm.Usage
}

// Turn authors r as one streamed response body of api, exactly as that
// provider streams it (event names, order and framing from the provider's
// streaming docs, checked against real recordings in the tests), ready for
// NewServer. It is the inverse of the provider packages' decoding: the
// matching provider (llm/anthropic, llm/openai NewChat / NewResponses,
// llm/bedrock, llm/gemini) pointed at the server returns an llm.Response
// with r's blocks, stop reason and usage (Total recomputed). Bodies are
// deterministic: the same r gives the same bytes (created timestamps are 0).
//
// Per API (the author_<api>.go files of this package give each event
// sequence and the docs it follows):
//
//   - llm.APIAnthropic — Messages SSE ("Streaming Messages": message_start,
//     content_block_start/delta/stop per block, ping, message_delta,
//     message_stop). Text, thinking (+Signature) and tool_use; every
//     llm.StopReason is sent by its own name. Usage: input_tokens,
//     cache_read_input_tokens, cache_creation_input_tokens, output_tokens;
//     no Reasoning count.
//   - llm.APIOpenAIChat — Chat Completions chunks (OpenAI API reference,
//     "The chat completion chunk object"), a usage chunk
//     (stream_options.include_usage) and data: [DONE]. At most
//     one text and one thinking block (a message has one content string;
//     thinking is the reasoning_content field of DeepSeek-style servers,
//     without Signature); neither may be empty. Stop end_turn → "stop",
//     tool_use → "tool_calls", max_tokens → "length", refusal →
//     "content_filter". Usage: no CacheWrite.
//   - llm.APIOpenAIResponses — Responses semantic events (OpenAI guide
//     "Streaming API responses", API reference "Streaming events":
//     response.created … response.completed, or response.incomplete for
//     max_tokens / refusal). Thinking is a reasoning item with one
//     summary_text part (Signature = encrypted_content); blocks keep their
//     ItemID, and get "<msg|rs|fc>_<reply id>_<block index>" when it is
//     empty. Usage: no CacheWrite.
//   - llm.APIBedrock — ConverseStream AWS event-stream messages (Bedrock
//     API reference "ConverseStream" / "ConverseStreamOutput": messageStart,
//     contentBlockStart for tool_use, contentBlockDelta, contentBlockStop,
//     messageStop, metadata). Stop also stop_sequence,
//     model_context_window_exceeded and refusal (→ content_filtered).
//     Usage: no Reasoning count.
//   - llm.APIGemini — streamGenerateContent?alt=sse chunks (Gemini API
//     reference "Generating content": GenerateContentResponse), one per
//     block and a last one with finishReason. Text and thinking blocks must not be
//     empty (unless they carry a Signature) and two of the same kind must not
//     be adjacent (the provider joins adjacent parts). Signature on any block
//     is its base64 thoughtSignature. A tool_use ID is sent as
//     functionCall.id; an empty ID sends none, as the Gemini API mostly
//     does, and the provider then makes one up ("gemini-call-<reply id>-<n>").
//     Args come back re-encoded by encoding/json (keys sorted). Stop end_turn
//     and tool_use → STOP, max_tokens → MAX_TOKENS, refusal → SAFETY.
//     Usage: no CacheWrite.
//
// On the OpenAI and Gemini APIs the provider infers tool_use from the
// calls present, so Stop end_turn with a tool_use block, or tool_use
// without one, is rejected there.
//
// Errors about r (and an unknown api) wrap ErrInvalidReply and name the
// API, the block index or field and the value. Turn is safe for concurrent
// use.
func Turn(api llm.API, r Reply) (Response, error) {
	if r.Model == "" {
		r.Model = DefaultModel
	}
	stop, err := checkReply(api, &r)
	if err != nil {
		return Response{}, err
	}
	if r.ID == "" {
		r.ID = defaultID[api]
	}
	w := &writer{}
	encoders[api](w, r, stop, r.Usage.WithTotal())
	if w.err != nil {
		return Response{}, fmt.Errorf("replay: %s: %w", api, w.err)
	}
	ct := "text/event-stream; charset=utf-8"
	if api == llm.APIBedrock {
		ct = eventStreamType
	}
	return Response{Body: w.buf.Bytes(), Header: http.Header{"Content-Type": {ct}},
		Source: fmt.Sprintf("replay.Turn %s %s", api, r.ID)}, nil
}

// encoders write a checked reply as the body of each API; stop is the
// wire stop value and u the usage with Total set.
var encoders = map[llm.API]func(w *writer, r Reply, stop string, u llm.Usage){
	llm.APIAnthropic:       anthropicBody,
	llm.APIOpenAIChat:      chatBody,
	llm.APIOpenAIResponses: responsesBody,
	llm.APIBedrock:         bedrockBody,
	llm.APIGemini:          geminiBody,
}

// Text authors a reply of one text block that ends the turn (end_turn),
// with default id, model and zero usage. Errors as Turn (Gemini and Chat
// reject an empty text).
func Text(api llm.API, text string) (Response, error) {
	return Turn(api, Reply{Blocks: []llm.Block{llm.TextBlock(text)}})
}

// ToolCall authors a reply of one tool_use block (id, name, input: a JSON
// object, "" = {}) that stops with tool_use, with default id, model and
// zero usage. Errors as Turn.
func ToolCall(api llm.API, id, name string, input json.RawMessage) (Response, error) {
	return Turn(api, Reply{Blocks: []llm.Block{llm.ToolUseBlock(id, name, input)}})
}

// AnthropicStream authors one Anthropic Messages SSE stream: Turn for
// llm.APIAnthropic with ID msgID, model DefaultModel, the given usage, stop
// reason ("" = inferred as in Reply.Stop) and blocks. Errors as Turn.
func AnthropicStream(msgID string, usage llm.Usage, stop llm.StopReason, blocks ...llm.Block) (Response, error) {
	return Turn(llm.APIAnthropic, Reply{ID: msgID, Usage: usage, Stop: stop, Blocks: blocks})
}

var defaultID = map[llm.API]string{
	llm.APIAnthropic:       "msg_replay",
	llm.APIOpenAIChat:      "chatcmpl-replay",
	llm.APIOpenAIResponses: "resp_replay",
	llm.APIGemini:          "replay",
}

// wireStops maps the stop reasons each API can express to its wire value
// (Responses: the incomplete_details.reason; "" = status completed).
var wireStops = map[llm.API]map[llm.StopReason]string{
	llm.APIAnthropic: {llm.StopEndTurn: "end_turn", llm.StopToolUse: "tool_use", llm.StopMaxTokens: "max_tokens",
		llm.StopSequence: "stop_sequence", llm.StopRefusal: "refusal", llm.StopPauseTurn: "pause_turn",
		llm.StopContextWindow: "model_context_window_exceeded"},
	llm.APIOpenAIChat: {llm.StopEndTurn: "stop", llm.StopToolUse: "tool_calls", llm.StopMaxTokens: "length",
		llm.StopRefusal: "content_filter"},
	llm.APIOpenAIResponses: {llm.StopEndTurn: "", llm.StopToolUse: "", llm.StopMaxTokens: "max_output_tokens",
		llm.StopRefusal: "content_filter"},
	llm.APIBedrock: {llm.StopEndTurn: "end_turn", llm.StopToolUse: "tool_use", llm.StopMaxTokens: "max_tokens",
		llm.StopSequence: "stop_sequence", llm.StopRefusal: "content_filtered",
		llm.StopContextWindow: "model_context_window_exceeded"},
	llm.APIGemini: {llm.StopEndTurn: "STOP", llm.StopToolUse: "STOP", llm.StopMaxTokens: "MAX_TOKENS",
		llm.StopRefusal: "SAFETY"},
}

// invalid returns an error wrapping ErrInvalidReply.
func invalid(api llm.API, format string, args ...any) error {
	return fmt.Errorf("%w for %s: %s", ErrInvalidReply, api, fmt.Sprintf(format, args...))
}

// checkReply validates r for api (see Turn), fills r.Stop when empty and
// returns the wire stop value.
func checkReply(api llm.API, r *Reply) (string, error) {
	stops, ok := wireStops[api]
	if !ok {
		return "", fmt.Errorf("%w: unknown wire API %q (want one of %v)", ErrInvalidReply, api, llm.APIs)
	}
	tools := 0
	for i, b := range r.Blocks {
		if err := checkBlock(api, i, b); err != nil {
			return "", err
		}
		if b.Type == llm.BlockToolUse {
			tools++
		}
	}
	if err := checkOrder(api, r.Blocks); err != nil {
		return "", err
	}
	if r.Stop == "" {
		r.Stop = llm.StopEndTurn
		if tools > 0 {
			r.Stop = llm.StopToolUse
		}
	}
	wire, ok := stops[r.Stop]
	if !ok {
		return "", invalid(api, "Stop %q cannot be expressed (want one of %s)", r.Stop, stopNames(stops))
	}
	inferred := api == llm.APIOpenAIChat || api == llm.APIOpenAIResponses || api == llm.APIGemini
	if inferred && r.Stop == llm.StopEndTurn && tools > 0 {
		return "", invalid(api, "Stop end_turn with %d tool_use blocks: the provider reports tool_use whenever calls are present; use tool_use or leave Stop empty", tools)
	}
	if inferred && r.Stop == llm.StopToolUse && tools == 0 {
		return "", invalid(api, "Stop tool_use without a tool_use block: the provider reports end_turn; add the call or use end_turn")
	}
	return wire, checkUsage(api, r.Usage)
}

func stopNames(m map[llm.StopReason]string) string {
	var out []string
	for _, s := range []llm.StopReason{llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopSequence,
		llm.StopRefusal, llm.StopPauseTurn, llm.StopContextWindow} {
		if _, ok := m[s]; ok {
			out = append(out, string(s))
		}
	}
	return strings.Join(out, ", ")
}

// checkBlock checks that block i carries only fields api has a place for.
func checkBlock(api llm.API, i int, b llm.Block) error {
	if len(b.Data) > 0 || b.MediaType != "" || b.URL != "" || len(b.Content) > 0 || b.IsError {
		return invalid(api, "block %d (%s) sets media, data, url, content or is_error: only text, thinking and tool_use fields are authored", i, b.Type)
	}
	if b.ItemID != "" && api != llm.APIOpenAIResponses {
		return invalid(api, "block %d (%s) has ItemID %q: only openai-responses carries item ids", i, b.Type, b.ItemID)
	}
	if b.Signature != "" {
		switch {
		case api == llm.APIGemini:
			if _, err := base64.StdEncoding.DecodeString(b.Signature); err != nil {
				return invalid(api, "block %d (%s) Signature %.20q… is not base64 (Gemini's thoughtSignature is bytes)", i, b.Type, b.Signature)
			}
		case b.Type != llm.BlockThinking:
			return invalid(api, "block %d (%s) has a Signature: only thinking blocks carry one (Gemini: any part)", i, b.Type)
		case api == llm.APIOpenAIChat:
			return invalid(api, "block %d thinking has a Signature: Chat Completions reasoning_content carries none", i)
		}
	}
	switch b.Type {
	case llm.BlockText, llm.BlockThinking:
		if b.Text == "" && b.Signature == "" && (api == llm.APIOpenAIChat || api == llm.APIGemini) {
			return invalid(api, "block %d (%s) is empty: the provider drops empty fragments; leave the block out", i, b.Type)
		}
		if b.ID != "" || b.Name != "" || len(b.Input) > 0 {
			return invalid(api, "block %d (%s) sets tool_use fields (id %q, name %q)", i, b.Type, b.ID, b.Name)
		}
	case llm.BlockToolUse:
		if b.Name == "" || (b.ID == "" && api != llm.APIGemini) {
			return invalid(api, "block %d tool_use needs an ID and a Name (got id=%q name=%q)", i, b.ID, b.Name)
		}
		if len(b.Input) > 0 && !isObject(b.Input) {
			return invalid(api, "block %d tool_use %q Input is not a JSON object: %.80s", i, b.Name, b.Input)
		}
	default:
		return invalid(api, "block %d has type %q: only text, thinking and tool_use are authored", i, b.Type)
	}
	return nil
}

// checkOrder rejects block sequences the provider would merge.
func checkOrder(api llm.API, blocks []llm.Block) error {
	seen := map[llm.BlockType]int{}
	for i, b := range blocks {
		switch api {
		case llm.APIOpenAIChat:
			if j, ok := seen[b.Type]; ok && b.Type != llm.BlockToolUse {
				return invalid(api, "blocks %d and %d are both %s: a Chat Completions message has one content string and one reasoning_content; join them", j, i, b.Type)
			}
		case llm.APIGemini:
			if i > 0 && b.Type != llm.BlockToolUse && blocks[i-1].Type == b.Type {
				return invalid(api, "blocks %d and %d are adjacent %s blocks: the provider joins adjacent parts of one kind; join them", i-1, i, b.Type)
			}
		}
		if _, ok := seen[b.Type]; !ok {
			seen[b.Type] = i
		}
	}
	return nil
}

// checkUsage rejects counts api does not report and inconsistent ones.
func checkUsage(api llm.API, u llm.Usage) error {
	if u.Input < 0 || u.Output < 0 || u.Reasoning < 0 || u.CacheRead < 0 || u.CacheWrite < 0 {
		return invalid(api, "Usage has a negative count: %+v", u)
	}
	if u.Reasoning > u.Output {
		return invalid(api, "Usage.Reasoning %d exceeds Usage.Output %d (reasoning is part of output)", u.Reasoning, u.Output)
	}
	switch api {
	case llm.APIAnthropic, llm.APIBedrock:
		if u.Reasoning > 0 {
			return invalid(api, "Usage.Reasoning %d: the API reports no reasoning count (thinking is inside output tokens); set it to 0", u.Reasoning)
		}
	default:
		if u.CacheWrite > 0 {
			return invalid(api, "Usage.CacheWrite %d: the API reports no cache writes; set it to 0", u.CacheWrite)
		}
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	return strings.HasPrefix(strings.TrimSpace(string(raw)), "{") && json.Valid(raw)
}

// input returns a tool_use input as text, {} when empty.
func input(b llm.Block) string {
	if len(bytes.TrimSpace(b.Input)) == 0 {
		return "{}"
	}
	return string(b.Input)
}

// writer accumulates a response body; the first encoding error stops it
// (the encoders only write strings, numbers, nil and validated raw JSON, so
// none is expected).
type writer struct {
	buf bytes.Buffer
	err error
}

// marshal encodes v as JSON without HTML escaping (as the providers send
// text) and without a trailing newline.
func (w *writer) marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil && w.err == nil {
		w.err = fmt.Errorf("encode %T: %w", v, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// sse appends one SSE event: an "event:" line when name is set, the data
// line and the blank line that ends the event.
func (w *writer) sse(name string, v any) {
	if name != "" {
		w.buf.WriteString("event: " + name + "\n")
	}
	w.buf.WriteString("data: ")
	w.buf.Write(w.marshal(v))
	w.buf.WriteString("\n\n")
}

// obj is the JSON object shape the encoders build.
type obj = map[string]any
