package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// mapper turns loop events into session/update notifications, in order
// (it is a synchronous bus observer):
//
//	message_update text / thinking   → agent_message_chunk / agent_thought_chunk
//	message_end (assistant) tool_use → tool_call (pending; kind, title, locations, raw input)
//	tool_execution_start             → tool_call_update in_progress
//	tool_execution_update            → tool_call_update with the progress text
//	tool_execution_end               → tool_call_update completed / failed, with the result
//	                                   (a denied call ends here too, failed, with the reason);
//	                                   after a todo_list call also plan, with the list's tasks
//	agent_stopped                    → agent_message_chunk with the stop message
//	cache_keepalive (a ping)         → usage_update (usage.go), when the session has one
//
// In the kiro dialect (kiro.go) the updates go out on _kiro.dev/session/update
// and tool progress as tool_call_chunk, when the client asked for them.
//
// Every notification made from a turn's event carries the turn's id in its
// _meta under MetaTurn: {"loop_id": …, "turn_index": …} (a loop per user
// prompt, turns indexed from 0: docs/turn.md, rule 2).
type mapper struct {
	conn    *sdk.AgentSideConnection
	session sdk.SessionId
	dialect dialect
	report  func() strata.UsageReport // the session's usage (usage.go); nil = none
}

// MetaTurn is the _meta key of a session update's turn id: the loop id and
// zero-based turn index of the event it was made from.
const MetaTurn = "strata.dev/turn"

// turnMeta returns the _meta of a notification made from an event of turn
// id (nil for none).
func turnMeta(id *event.TurnID) map[string]any {
	if id == nil {
		return nil
	}
	return map[string]any{MetaTurn: *id}
}

// send sends u, made from no turn's event.
func (m *mapper) send(u sdk.SessionUpdate) { m.sendWith(nil, u) }

// sendWith sends u with _meta meta, on the dialect's method.
func (m *mapper) sendWith(meta map[string]any, u sdk.SessionUpdate) {
	if m.dialect.kiroUpdates {
		m.sendKiro(meta, u)
		return
	}
	_ = m.conn.SessionUpdate(context.Background(), sdk.SessionNotification{Meta: meta, SessionId: m.session, Update: u})
}

func (m *mapper) observe(e event.Event) {
	meta := turnMeta(e.Turn)
	send := func(u sdk.SessionUpdate) { m.sendWith(meta, u) }
	switch e.Kind {
	case event.MessageUpdate:
		switch e.Delta.Type {
		case llm.DeltaText:
			send(sdk.UpdateAgentMessageText(e.Delta.Text))
		case llm.DeltaThinking:
			send(sdk.UpdateAgentThoughtText(e.Delta.Text))
		}
	case event.MessageEnd:
		if e.Message == nil || e.Message.Role != llm.RoleAssistant {
			return
		}
		for _, c := range e.Message.ToolUses() {
			send(toolCallStart(c, sdk.ToolCallStatusPending))
		}
	case event.ToolExecutionStart:
		send(sdk.UpdateToolCall(sdk.ToolCallId(e.ToolCall.ID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
	case event.ToolExecutionUpdate:
		if m.dialect.toolChunks {
			m.sendKiro(meta, toolChunk(e))
			return
		}
		send(sdk.UpdateToolCall(sdk.ToolCallId(e.ToolCall.ID),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(e.Text))})))
	case event.ToolExecutionEnd:
		send(toolResult(*e.ToolCall, *e.ToolResult))
		if p, ok := plan(*e.ToolCall, *e.ToolResult); ok {
			send(p)
		}
	case event.AgentStopped:
		send(sdk.UpdateAgentMessageText("\n" + e.Text))
	case event.CacheKeepAlive:
		m.sendUsage() // a ping is no turn: the update carries no turn id
	}
}

// kind is the ACP tool kind of a strata tool.
func kind(name string) sdk.ToolKind {
	switch name {
	case "fs_read":
		return sdk.ToolKindRead
	case "fs_write":
		return sdk.ToolKindEdit
	case "execute_bash":
		return sdk.ToolKindExecute
	case "grep", "glob":
		return sdk.ToolKindSearch
	case "use_subagent", "todo_list":
		return sdk.ToolKindThink
	}
	return sdk.ToolKindOther
}

// locations are the file paths a tool call's input names.
func locations(in json.RawMessage) []sdk.ToolCallLocation {
	var v struct {
		Path       string
		Operations []struct{ Path string }
	}
	_ = json.Unmarshal(in, &v)
	var out []sdk.ToolCallLocation
	if v.Path != "" {
		out = append(out, sdk.ToolCallLocation{Path: v.Path})
	}
	for _, o := range v.Operations {
		if o.Path != "" {
			out = append(out, sdk.ToolCallLocation{Path: o.Path})
		}
	}
	return out
}

func title(c llm.Block) string {
	var v map[string]any
	_ = json.Unmarshal(c.Input, &v)
	for _, k := range []string{"command", "path", "pattern", "task"} {
		if s, ok := v[k].(string); ok && s != "" {
			first, _, _ := strings.Cut(s, "\n")
			return c.Name + ": " + first
		}
	}
	return c.Name
}

func rawInput(c llm.Block) any {
	var v any
	if json.Unmarshal(c.Input, &v) != nil {
		return string(c.Input)
	}
	return v
}

func toolCallStart(c llm.Block, status sdk.ToolCallStatus) sdk.SessionUpdate {
	return sdk.StartToolCall(sdk.ToolCallId(c.ID), title(c), sdk.WithStartKind(kind(c.Name)), sdk.WithStartStatus(status),
		sdk.WithStartLocations(locations(c.Input)), sdk.WithStartRawInput(rawInput(c)))
}

// toolCallUpdate describes a call for session/request_permission.
func toolCallUpdate(c llm.Block) sdk.ToolCallUpdate {
	return sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(c.ID), Title: sdk.Ptr(title(c)), Kind: sdk.Ptr(kind(c.Name)),
		Locations: locations(c.Input), RawInput: rawInput(c)}
}

// toolResult is the final tool_call_update of a call: its status, its text
// (fs_write's result holds the unified diff of the change) and, for a
// completed fs_write create or str_replace, ACP diff content (path, old and
// new text) that editors show as a diff.
func toolResult(c, r llm.Block) sdk.SessionUpdate {
	status := sdk.ToolCallStatusCompleted
	if r.IsError {
		status = sdk.ToolCallStatusFailed
	}
	var content []sdk.ToolCallContent
	if d, ok := editDiff(c); ok && !r.IsError {
		content = append(content, d)
	}
	for _, b := range r.Content {
		if b.Type == llm.BlockText {
			content = append(content, sdk.ToolContent(sdk.TextBlock(b.Text)))
		}
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(c.ID), sdk.WithUpdateStatus(status), sdk.WithUpdateContent(content))
}

// plan is the ACP plan of a successful todo_list call: its tasks in order,
// completed ones completed, the first open one in_progress, the rest
// pending (ACP: each plan update replaces the whole plan).
func plan(c, r llm.Block) (sdk.SessionUpdate, bool) {
	if c.Name != "todo_list" || r.IsError || len(r.Content) == 0 {
		return sdk.SessionUpdate{}, false
	}
	todo, ok := tool.ParseTodo(r.Content[0].Text)
	if !ok {
		return sdk.SessionUpdate{}, false
	}
	entries := []sdk.PlanEntry{}
	open := false
	for _, t := range todo.Tasks {
		st := sdk.PlanEntryStatusCompleted
		if !t.Completed {
			st = sdk.PlanEntryStatusPending
			if !open {
				st, open = sdk.PlanEntryStatusInProgress, true
			}
		}
		entries = append(entries, sdk.PlanEntry{Content: t.Task, Priority: sdk.PlanEntryPriorityMedium, Status: st})
	}
	return sdk.UpdatePlan(entries...), true
}

// editDiff is the ACP diff of an fs_write create (no old text) or
// str_replace (old_str → new_str) call.
func editDiff(c llm.Block) (sdk.ToolCallContent, bool) {
	if c.Name != "fs_write" {
		return sdk.ToolCallContent{}, false
	}
	var in struct {
		Command, Path string
		FileText      string `json:"file_text"`
		OldStr        string `json:"old_str"`
		NewStr        string `json:"new_str"`
	}
	if json.Unmarshal(c.Input, &in) != nil || in.Path == "" {
		return sdk.ToolCallContent{}, false
	}
	switch in.Command {
	case "create":
		return sdk.ToolDiffContent(in.Path, in.FileText), true
	case "str_replace":
		return sdk.ToolDiffContent(in.Path, in.NewStr, in.OldStr), true
	}
	return sdk.ToolCallContent{}, false
}

// historyUpdates replays a stored conversation as updates (session/load):
// user text and images as user_message_chunk, assistant text and thinking as
// agent_message_chunk / agent_thought_chunk, tool calls as tool_call with
// their results as tool_call_update.
func historyUpdates(h []llm.Message) []sdk.SessionUpdate {
	calls := map[string]llm.Block{}
	var out []sdk.SessionUpdate
	for _, m := range h {
		for _, b := range m.Content {
			switch {
			case b.Type == llm.BlockText && m.Role == llm.RoleUser:
				out = append(out, sdk.SessionUpdate{UserMessageChunk: &sdk.SessionUpdateUserMessageChunk{
					Content: sdk.TextBlock(b.Text), SessionUpdate: "user_message_chunk"}})
			case b.Type == llm.BlockImage && m.Role == llm.RoleUser && len(b.Data) > 0:
				out = append(out, sdk.SessionUpdate{UserMessageChunk: &sdk.SessionUpdateUserMessageChunk{
					Content: sdk.ImageBlock(base64.StdEncoding.EncodeToString(b.Data), b.MediaType), SessionUpdate: "user_message_chunk"}})
			case b.Type == llm.BlockText:
				out = append(out, sdk.UpdateAgentMessageText(b.Text))
			case b.Type == llm.BlockThinking:
				out = append(out, sdk.UpdateAgentThoughtText(b.Text))
			case b.Type == llm.BlockToolUse:
				calls[b.ID] = b
				out = append(out, toolCallStart(b, sdk.ToolCallStatusPending))
			case b.Type == llm.BlockToolResult:
				out = append(out, toolResult(calls[b.ID], b))
			}
		}
	}
	return out
}

// promptImages are a prompt's image blocks as llm image blocks (inline
// base64 data, or the URI when the client sent only that).
func promptImages(blocks []sdk.ContentBlock) ([]llm.Block, error) {
	var out []llm.Block
	for i, b := range blocks {
		img := b.Image
		if img == nil {
			continue
		}
		lb := llm.Block{Type: llm.BlockImage, MediaType: img.MimeType}
		switch {
		case img.Data != "":
			data, err := base64.StdEncoding.DecodeString(img.Data)
			if err != nil {
				return nil, fmt.Errorf("prompt[%d]: image data is not base64: %w", i, err)
			}
			lb.Data = data
		case img.Uri != nil:
			lb.URL = *img.Uri
		default:
			return nil, fmt.Errorf("prompt[%d]: image has neither data nor uri", i)
		}
		out = append(out, lb)
	}
	return out, nil
}

// promptContent is a session/prompt's text (promptText) and images
// (promptImages), or the invalid-params error both servers answer for bad
// image data or a prompt with neither.
func promptContent(blocks []sdk.ContentBlock) (string, []llm.Block, error) {
	text := promptText(blocks)
	images, err := promptImages(blocks)
	if err != nil {
		return "", nil, sdk.NewInvalidParams(map[string]any{"prompt": err.Error()})
	}
	if text == "" && len(images) == 0 {
		return "", nil, sdk.NewInvalidParams(map[string]any{"prompt": "no text, resource or image content in the prompt"})
	}
	return text, images, nil
}

// promptText joins a prompt's text blocks, resource links (as their URI)
// and embedded text resources (with their URI as a header).
func promptText(blocks []sdk.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			parts = append(parts, "@"+b.ResourceLink.Uri)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, "<resource uri=\""+r.Uri+"\">\n"+r.Text+"\n</resource>")
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n\n"))
}
