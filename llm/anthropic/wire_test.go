package anthropic

// An independent, deliberately simple reader of Anthropic Messages wire
// bodies (raw SSE and complete JSON responses), used to compute what the
// provider must return. It shares no code with the provider: it scans SSE
// lines with bufio and decodes each data payload into maps with
// encoding/json, applying the Messages streaming rules from the Anthropic
// docs ("Streaming Messages"): message_start opens the message and carries
// the input-side usage, content blocks start/delta/stop by index,
// message_delta carries the stop reason and cumulative usage, message_stop
// ends the response, `event: error` is an error.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
)

// outcome says how a served body must end.
type outcome int

const (
	outOK        outcome = iota // a complete response
	outTruncated                // ends after message_start without message_stop
	outMalformed                // a protocol violation (second message_start, …)
	outAPIError                 // an error event or an HTTP error body
)

// wantBlock is one expected content block of the final message.
type wantBlock struct {
	Type      string // text, thinking, redacted_thinking, tool_use
	Text      string // text, or thinking text
	Signature string
	Data      string // redacted_thinking
	ID, Name  string
	Input     string // tool_use: the complete JSON document
}

// expectation is what the provider must report for one served response.
type expectation struct {
	Outcome      outcome
	ErrType      string // outAPIError
	ErrMessage   string
	RequestID    string      // error bodies' request_id
	Blocks       []wantBlock // kept blocks in order
	DroppedTool  bool        // a trailing tool_use cut off at max_tokens was dropped
	StopReason   string
	ID, Model    string
	Input        int64
	Output       int64
	CacheRead    int64
	CacheWrite   int64
	CacheWrite1h int64 // cache_creation.ephemeral_1h_input_tokens (message_start or the message)
}

// keptTypes are the block types strata keeps (the package comment's rule).
var keptTypes = map[string]bool{"text": true, "thinking": true, "redacted_thinking": true, "tool_use": true}

type rawBlock struct {
	wantBlock
	keep    bool
	partial strings.Builder // concatenated input_json_delta
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) (int64, bool) {
	f, ok := v.(float64)
	return int64(f), ok
}

// readSSE computes the expectation of a raw Anthropic SSE body.
func readSSE(body []byte) expectation {
	var (
		e       expectation
		started bool
		stopped bool
		blocks  []*rawBlock
		event   string
	)
	// SSE (WHATWG HTML, "Server-sent events"): an event is dispatched at a
	// blank line; data lines join with "\n"; a final event without its blank
	// line is discarded at end of input.
	var events []string
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			if data != nil {
				events = append(events, event+"\x00"+strings.Join(data, "\n"))
			}
			event, data = "", nil
			continue
		}
		if v, ok := strings.CutPrefix(line, "event:"); ok {
			event = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(v, " "))
		}
	}
	for _, raw := range events {
		event, data, _ := strings.Cut(raw, "\x00")
		if stopped {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return expectation{Outcome: outMalformed}
		}
		typ := str(ev["type"])
		if event == "error" || typ == "error" {
			errObj, _ := ev["error"].(map[string]any)
			return expectation{Outcome: outAPIError, ErrType: str(errObj["type"]), ErrMessage: str(errObj["message"])}
		}
		if typ == "ping" {
			continue
		}
		if typ != "message_start" && !started {
			return expectation{Outcome: outMalformed}
		}
		switch typ {
		case "message_start":
			if started {
				return expectation{Outcome: outMalformed}
			}
			started = true
			msg, _ := ev["message"].(map[string]any)
			e.ID, e.Model, e.StopReason = str(msg["id"]), str(msg["model"]), str(msg["stop_reason"])
			readUsage(&e, msg["usage"], true)
			// Complete blocks may come inside message_start.
			content, _ := msg["content"].([]any)
			for _, c := range content {
				cb, _ := c.(map[string]any)
				blocks = append(blocks, startBlock(cb))
			}
		case "content_block_start":
			cb, _ := ev["content_block"].(map[string]any)
			idx, _ := num(ev["index"])
			if int(idx) != len(blocks) {
				return expectation{Outcome: outMalformed}
			}
			blocks = append(blocks, startBlock(cb))
		case "content_block_delta":
			idx, _ := num(ev["index"])
			if int(idx) >= len(blocks) {
				return expectation{Outcome: outMalformed}
			}
			b := blocks[idx]
			d, _ := ev["delta"].(map[string]any)
			switch str(d["type"]) {
			case "text_delta":
				b.Text += str(d["text"])
			case "thinking_delta":
				b.Text += str(d["thinking"])
			case "signature_delta":
				b.Signature += str(d["signature"])
			case "input_json_delta":
				b.partial.WriteString(str(d["partial_json"]))
			}
		case "message_delta":
			d, _ := ev["delta"].(map[string]any)
			e.StopReason = str(d["stop_reason"])
			readUsage(&e, ev["usage"], false)
		case "message_stop":
			stopped = true
		}
	}
	if !stopped {
		return expectation{Outcome: outTruncated}
	}
	for _, b := range blocks {
		if !b.keep {
			continue
		}
		if b.Type == "tool_use" {
			if b.partial.Len() > 0 {
				b.Input = b.partial.String()
			}
			if !isJSONObjectText(b.Input) {
				if e.StopReason == "max_tokens" {
					e.DroppedTool = true
					continue
				}
				return expectation{Outcome: outMalformed}
			}
		}
		e.Blocks = append(e.Blocks, b.wantBlock)
	}
	return e
}

func startBlock(cb map[string]any) *rawBlock {
	b := &rawBlock{keep: keptTypes[str(cb["type"])]}
	b.Type, b.Text, b.Signature, b.Data, b.ID, b.Name = str(cb["type"]), str(cb["text"]), str(cb["signature"]), str(cb["data"]), str(cb["id"]), str(cb["name"])
	if b.Type == "thinking" {
		b.Text = str(cb["thinking"])
	}
	if in, ok := cb["input"]; ok {
		raw, _ := json.Marshal(in)
		b.Input = string(raw)
	}
	return b
}

// readUsage applies a usage object: message_start sets every field; in
// message_delta the counts are cumulative totals, output_tokens always and
// the input-side counts only when present (non-null).
func readUsage(e *expectation, v any, start bool) {
	u, _ := v.(map[string]any)
	if n, ok := num(u["output_tokens"]); ok || !start {
		e.Output = n
	}
	if n, ok := num(u["input_tokens"]); ok || start {
		e.Input = n
	}
	if n, ok := num(u["cache_read_input_tokens"]); ok || start {
		e.CacheRead = n
	}
	if n, ok := num(u["cache_creation_input_tokens"]); ok || start {
		e.CacheWrite = n
	}
	if cc, ok := u["cache_creation"].(map[string]any); ok && start {
		e.CacheWrite1h, _ = num(cc["ephemeral_1h_input_tokens"])
	}
}

// readJSON computes the expectation of a complete (non-streaming) message
// body, or of an error body.
func readJSON(body []byte) expectation {
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil {
		return expectation{Outcome: outMalformed}
	}
	if str(msg["type"]) == "error" {
		errObj, _ := msg["error"].(map[string]any)
		return expectation{Outcome: outAPIError, ErrType: str(errObj["type"]), ErrMessage: str(errObj["message"]), RequestID: str(msg["request_id"])}
	}
	e := expectation{ID: str(msg["id"]), Model: str(msg["model"]), StopReason: str(msg["stop_reason"])}
	readUsage(&e, msg["usage"], true)
	content, _ := msg["content"].([]any)
	for _, c := range content {
		cb, _ := c.(map[string]any)
		typ := str(cb["type"])
		if !keptTypes[typ] {
			continue
		}
		b := wantBlock{Type: typ, Text: str(cb["text"]), Signature: str(cb["signature"]), Data: str(cb["data"]), ID: str(cb["id"]), Name: str(cb["name"])}
		if typ == "thinking" {
			b.Text = str(cb["thinking"])
		}
		if typ == "tool_use" {
			raw, _ := json.Marshal(cb["input"])
			b.Input = string(raw)
		}
		e.Blocks = append(e.Blocks, b)
	}
	return e
}

func isJSONObjectText(s string) bool {
	var m map[string]any
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// jsonEqual reports whether two JSON documents hold the same value.
func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x) // map keys are sorted by Marshal
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
