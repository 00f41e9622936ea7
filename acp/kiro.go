package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
)

// The kiro dialect of ACP session updates (docs/kiro.md, "ACP updates"). On
// the wire the method carries ACP's extension prefix,
// "_kiro.dev/session/update", as kiro-cli sends it (its
// crates/chat-cli-v2/src/agent/acp/extensions.rs, methods::SESSION_UPDATE);
// its params are a session/update's ({sessionId, update}). kiro-cli itself
// sends only tool_call_chunk there and every standard update on
// session/update; a client may ask for every update on the extension method
// (the design's reading) with a key set to true in its initialize
// ClientCapabilities._meta; strata advertises both keys in its
// AgentCapabilities._meta.
const (
	// MetaKiroSessionUpdate asks for every session update on
	// KiroSessionUpdateMethod instead of session/update.
	MetaKiroSessionUpdate = "kiro.dev/session/update"
	// MetaKiroToolCallChunk asks for incremental tool output (the lines a
	// running tool reports, such as execute_bash's output) as tool_call_chunk
	// updates on KiroSessionUpdateMethod instead of tool_call_update content.
	MetaKiroToolCallChunk = "kiro.dev/tool_call_chunk"
	// KiroSessionUpdateMethod is the notification method of the kiro
	// dialect.
	KiroSessionUpdateMethod = "_kiro.dev/session/update"
)

// ServeOptions configure ServeWith.
type ServeOptions struct {
	// Mode is the approval mode of new sessions.
	Mode agent.Mode
	// KiroDialect sends every client what kiro-cli sends (standard updates
	// on session/update, tool progress as tool_call_chunk on
	// KiroSessionUpdateMethod) whatever its capabilities say: for kiro's own
	// clients, which do not ask.
	KiroDialect bool
	// Elicit, when set, is bound to the connection: the workspace's MCP
	// forms (its Options.MCPElicit) go to the client (elicit.go).
	Elicit *Elicitor
}

// dialect is what a client asked for (dialectOf).
type dialect struct {
	kiroUpdates bool // every update on KiroSessionUpdateMethod
	toolChunks  bool // tool progress as tool_call_chunk
}

// dialectOf reads the client's _meta capability keys.
func dialectOf(caps sdk.ClientCapabilities) dialect {
	on := func(k string) bool { v, _ := caps.Meta[k].(bool); return v }
	return dialect{kiroUpdates: on(MetaKiroSessionUpdate), toolChunks: on(MetaKiroToolCallChunk)}
}

// agentMeta is the AgentCapabilities._meta strata answers initialize with.
func agentMeta() map[string]any {
	return map[string]any{MetaKiroSessionUpdate: true, MetaKiroToolCallChunk: true}
}

// toolCallChunk is the tool_call_chunk update of the kiro dialect: one
// piece of a running tool's output, for the tool call toolCallId.
type toolCallChunk struct {
	SessionUpdate string                `json:"sessionUpdate"` // "tool_call_chunk"
	ToolCallID    string                `json:"toolCallId"`
	Title         string                `json:"title,omitempty"`
	Kind          sdk.ToolKind          `json:"kind,omitempty"`
	Content       []sdk.ToolCallContent `json:"content"`
}

// kiroNotification is the params of KiroSessionUpdateMethod.
type kiroNotification struct {
	Meta      map[string]any `json:"_meta,omitempty"` // MetaTurn
	SessionID sdk.SessionId  `json:"sessionId"`
	Update    any            `json:"update"`
}

// sendKiro sends update on KiroSessionUpdateMethod with _meta meta.
func (m *mapper) sendKiro(meta map[string]any, update any) {
	_ = m.conn.NotifyExtension(context.Background(), KiroSessionUpdateMethod, kiroNotification{Meta: meta, SessionID: m.session, Update: update})
}

// toolChunk is the tool_call_chunk of a tool_execution_update event.
func toolChunk(e event.Event) toolCallChunk {
	return toolCallChunk{SessionUpdate: "tool_call_chunk", ToolCallID: e.ToolCall.ID, Title: title(*e.ToolCall), Kind: kind(e.ToolCall.Name),
		Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(e.Text))}}
}
