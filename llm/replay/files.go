package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// SSEFile loads a raw SSE recording (the response body exactly as sent) as one
// 200 response.
func SSEFile(path string) (Response, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Response{}, fmt.Errorf("replay: %w", err)
	}
	return Response{Body: b, Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, Source: path}, nil
}

// JSONFile loads a complete (non-streaming) JSON response body as one
// response with the given status (0 = 200).
func JSONFile(path string, status int) (Response, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Response{}, fmt.Errorf("replay: %w", err)
	}
	if !json.Valid(b) {
		return Response{}, fmt.Errorf("replay: %s is not a JSON document", path)
	}
	return Response{Status: status, Body: b, Header: http.Header{"Content-Type": {"application/json"}}, Source: path}, nil
}

// Family is the wire protocol of a recorded stream.
type Family string

// Stream families the chunk re-framer knows.
const (
	FamilyAnthropic       Family = "anthropic"        // Anthropic Messages SSE
	FamilyOpenAIChat      Family = "openai-chat"      // Chat Completions chunks, ends with [DONE]
	FamilyOpenAIResponses Family = "openai-responses" // Responses API events
	FamilyBedrock         Family = "bedrock"          // Bedrock ConverseStream events, {"<eventType>": payload}
	FamilyGemini          Family = "gemini"           // Gemini GenerateContentResponse chunks (no event names)
)

// bedrockEvents are the ConverseStream event types (Bedrock API reference,
// ConverseStreamOutput).
var bedrockEvents = map[string]bool{"messageStart": true, "contentBlockStart": true, "contentBlockDelta": true,
	"contentBlockStop": true, "messageStop": true, "metadata": true}

// EventStreamFile loads a raw AWS event-stream body
// (application/vnd.amazon.eventstream, e.g. a recorded Bedrock ConverseStream
// response) as one 200 response.
func EventStreamFile(path string) (Response, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Response{}, fmt.Errorf("replay: %w", err)
	}
	return Response{Body: b, Header: http.Header{"Content-Type": {eventStreamType}}, Source: path}, nil
}

const eventStreamType = "application/vnd.amazon.eventstream"

// bedrockEvent encodes one {"<eventType>": payload} chunk line as an AWS
// event-stream message (headers :event-type, :content-type, :message-type
// "event"), as Bedrock sends it.
func bedrockEvent(w *bytes.Buffer, line []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil || len(m) != 1 {
		return fmt.Errorf("not a {\"<eventType>\": payload} object")
	}
	for typ, payload := range m {
		return bedrockMessage(w, typ, payload)
	}
	return nil
}

// bedrockMessage encodes one ConverseStream event of type typ with its JSON
// payload as an AWS event-stream message.
func bedrockMessage(w *bytes.Buffer, typ string, payload []byte) error {
	msg := eventstream.Message{Payload: payload}
	msg.Headers.Set(":event-type", eventstream.StringValue(typ))
	msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	msg.Headers.Set(":message-type", eventstream.StringValue("event"))
	return eventstream.NewEncoder().Encode(w, msg)
}

// DetectFamily names the family of one streamed JSON payload by its shape:
// Anthropic events carry type message_*/content_block_*/ping/error, Responses
// events carry type "response.*" (or "error"), Chat Completions chunks carry
// object "chat.completion.chunk" or a choices array, Bedrock events are an
// object with one ConverseStream event-type key, Gemini chunks carry
// candidates, promptFeedback or usageMetadata.
func DetectFamily(payload []byte) (Family, error) {
	var probe struct {
		Type    string          `json:"type"`
		Object  string          `json:"object"`
		Choices json.RawMessage `json:"choices"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return "", fmt.Errorf("not a JSON object: %w", err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(payload, &keys)
	if len(keys) == 1 {
		for k := range keys {
			if bedrockEvents[k] {
				return FamilyBedrock, nil
			}
		}
	}
	switch {
	case strings.HasPrefix(probe.Type, "response."):
		return FamilyOpenAIResponses, nil
	case strings.HasPrefix(probe.Type, "message_"), strings.HasPrefix(probe.Type, "content_block_"), probe.Type == "ping":
		return FamilyAnthropic, nil
	case probe.Object == "chat.completion.chunk", len(probe.Choices) > 0:
		return FamilyOpenAIChat, nil
	case keys["candidates"] != nil, keys["promptFeedback"] != nil, keys["usageMetadata"] != nil:
		return FamilyGemini, nil
	}
	return "", fmt.Errorf("unknown stream payload (type %q, object %q)", probe.Type, probe.Object)
}

// ChunksFile loads a JSON-lines chunk file (one streamed data payload per line,
// SSE framing removed, as in vercel-ai's *.chunks.txt) and re-frames it as SSE:
// "event: <type>" (Anthropic and Responses, where the payload names its type),
// "data: <line>", a blank line, and "data: [DONE]" at the end of Chat
// Completions streams. Bedrock lines are re-encoded as AWS event-stream
// messages instead (application/vnd.amazon.eventstream).
//
// A file that concatenates several complete streams (several Anthropic
// message_start … message_stop, or Responses response.created …) yields one
// Response per stream, in order. A line that is not valid JSON is an error
// naming the file and line: such a file cannot be served as a real stream.
func ChunksFile(path string) ([]Response, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var (
		family Family
		out    []Response
		cur    bytes.Buffer
		lineNo int
	)
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		if family == FamilyOpenAIChat {
			cur.WriteString("data: [DONE]\n\n")
		}
		ct := "text/event-stream; charset=utf-8"
		if family == FamilyBedrock {
			ct = eventStreamType
		}
		out = append(out, Response{Body: append([]byte(nil), cur.Bytes()...),
			Header: http.Header{"Content-Type": {ct}}, Source: path})
		cur.Reset()
	}
	for sc.Scan() {
		lineNo++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			return nil, fmt.Errorf("replay: %s line %d is not valid JSON; the file cannot be replayed as a stream", path, lineNo)
		}
		if family == "" {
			if family, err = DetectFamily(line); err != nil {
				return nil, fmt.Errorf("replay: %s line %d: %w", path, lineNo, err)
			}
		}
		if family == FamilyBedrock {
			if err := bedrockEvent(&cur, line); err != nil {
				return nil, fmt.Errorf("replay: %s line %d: %w", path, lineNo, err)
			}
			continue
		}
		var probe struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(line, &probe)
		if (family == FamilyAnthropic && probe.Type == "message_start") ||
			(family == FamilyOpenAIResponses && probe.Type == "response.created") {
			flush()
		}
		if probe.Type != "" && family != FamilyOpenAIChat {
			fmt.Fprintf(&cur, "event: %s\n", probe.Type)
		}
		cur.WriteString("data: ")
		cur.Write(line)
		cur.WriteString("\n\n")
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("replay: read %s: %w", path, err)
	}
	flush()
	if len(out) == 0 {
		return nil, fmt.Errorf("replay: %s holds no chunks", path)
	}
	return out, nil
}
