// Package llm holds strata's provider-neutral model of a model call: messages
// made of content blocks, tool specs, the request (with cache breakpoints as a
// first-class field), usage, stop reasons, stream deltas and the Provider
// interface that the provider packages (llm/anthropic, llm/openai) implement.
//
// Nothing here knows a wire format. Each provider package maps these types to
// its official SDK's params and back, once.
package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Role is the author of a message. Only user and assistant messages exist in
// the conversation; the system prompt lives in Request.System (Anthropic
// Messages API shape; OpenAI's system/developer message is produced from it).
type Role string

// The two conversation roles, and RoleSystem.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleSystem marks a loop notice for the user, such as the agent loop's
	// "[Agent stopped: …]" message on an AgentStopped event. It never appears
	// in a Request's Messages or an agent's history; providers reject it.
	RoleSystem Role = "system"
)

// BlockType names the kind of a content block, with the names the Anthropic
// Messages API uses on the wire.
type BlockType string

// Content block kinds.
const (
	BlockText             BlockType = "text"
	BlockImage            BlockType = "image"
	BlockToolUse          BlockType = "tool_use"
	BlockToolResult       BlockType = "tool_result"
	BlockThinking         BlockType = "thinking"
	BlockRedactedThinking BlockType = "redacted_thinking"
)

// Block is one content block of a message. It is a tagged struct: Type says
// which fields are meaningful.
//
//   - text: Text.
//   - image: MediaType ("image/png", …) and either Data (raw bytes, sent
//     base64-encoded) or URL.
//   - tool_use: ID (provider call id, e.g. "toolu_…" or "call_…"), Name, Input
//     (the JSON object of arguments, exactly as the model produced it).
//   - tool_result: ID (the tool_use id it answers), Content (text and image
//     blocks), IsError.
//   - thinking: Text (the reasoning text or summary) and Signature (Anthropic's
//     signature, or OpenAI Responses' encrypted_content, opaque and replayed
//     unchanged); ItemID keeps an OpenAI Responses reasoning item id.
//   - redacted_thinking: Data holds the opaque redacted payload bytes.
//
// ItemID also keeps OpenAI Responses item ids ("fc_…", "msg_…") for tool_use
// and text blocks, so a conversation can be sent back unchanged.
type Block struct {
	Type      BlockType       `json:"type"`
	Text      string          `json:"text,omitempty"`
	Signature string          `json:"signature,omitempty"`
	MediaType string          `json:"media_type,omitempty"`
	Data      []byte          `json:"data,omitempty"`
	URL       string          `json:"url,omitempty"`
	ID        string          `json:"id,omitempty"`
	ItemID    string          `json:"item_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Content   []Block         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// ToolUseBlock returns a tool_use block. input must be a JSON object; an empty
// input is stored as {}.
func ToolUseBlock(id, name string, input json.RawMessage) Block {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return Block{Type: BlockToolUse, ID: id, Name: name, Input: input}
}

// ToolResultBlock returns a tool_result block answering the tool_use id with
// one text block.
func ToolResultBlock(id, text string, isError bool) Block {
	return Block{Type: BlockToolResult, ID: id, Content: []Block{TextBlock(text)}, IsError: isError}
}

// Message is one conversation message: a role and its content blocks in
// order. Tool results travel in user messages (Anthropic shape); providers
// that want a separate "tool" role (OpenAI) split them when encoding.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// UserText returns a user message with one text block.
func UserText(s string) Message { return Message{Role: RoleUser, Content: []Block{TextBlock(s)}} }

// AssistantText returns an assistant message with one text block.
func AssistantText(s string) Message {
	return Message{Role: RoleAssistant, Content: []Block{TextBlock(s)}}
}

// Text returns the concatenation of the message's text blocks (not thinking,
// not tool results).
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ToolUses returns the message's tool_use blocks in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, c := range m.Content {
		if c.Type == BlockToolUse {
			out = append(out, c)
		}
	}
	return out
}

// Validate checks the message shape a provider relies on: a known role, known
// block types, tool_use blocks with id and name and a JSON-object input, and
// tool_result blocks with the id they answer. The error names the offending
// block index.
func (m Message) Validate() error {
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return fmt.Errorf("message role %q: want %q or %q", m.Role, RoleUser, RoleAssistant)
	}
	for i, b := range m.Content {
		switch b.Type {
		case BlockText, BlockThinking, BlockRedactedThinking:
		case BlockImage:
			if len(b.Data) == 0 && b.URL == "" {
				return fmt.Errorf("%s message block %d: image has neither data nor url", m.Role, i)
			}
		case BlockToolUse:
			if b.ID == "" || b.Name == "" {
				return fmt.Errorf("%s message block %d: tool_use needs id and name (got id=%q name=%q)", m.Role, i, b.ID, b.Name)
			}
			if !isJSONObject(b.Input) {
				return fmt.Errorf("%s message block %d: tool_use %q input is not a JSON object: %.80s", m.Role, i, b.Name, b.Input)
			}
		case BlockToolResult:
			if b.ID == "" {
				return fmt.Errorf("%s message block %d: tool_result needs the tool_use id it answers", m.Role, i)
			}
		default:
			return fmt.Errorf("%s message block %d: unknown block type %q", m.Role, i, b.Type)
		}
	}
	return nil
}

func isJSONObject(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	if !strings.HasPrefix(s, "{") {
		return false
	}
	return json.Valid([]byte(s))
}
