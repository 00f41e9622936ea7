package telemetry_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/telemetry"
)

// run runs prompt in a new workspace with strata's default agent on the
// scripted responses, exporting to a new receiver, and returns the spans by
// name (in end order) and the receiver.
func run(t *testing.T, script []replay.Response, prompt string) (map[string][]*tracepb.Span, *receiver, error) {
	t.Helper()
	r := newReceiver(t)
	tp, mp, flush := r.providers(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("# notes\n"), 0o644)
	_, err := strata.Run(context.Background(), strata.Options{Dir: dir, ProviderName: "anthropic", Replay: script,
		NoProjectFiles: true, DisableRepoContext: true, Mode: agent.ModeAll, TracerProvider: tp, MeterProvider: mp, Warn: func(string) {}}, prompt)
	flush()
	byName := map[string][]*tracepb.Span{}
	for _, s := range r.spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	return byName, r, err
}

func toolCall(t *testing.T, id, name, input string) replay.Response {
	t.Helper()
	r, err := replay.ToolCall(llm.APIAnthropic, id, name, json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func text(t *testing.T, s string) replay.Response {
	t.Helper()
	r, err := replay.Text(llm.APIAnthropic, s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// chatSpans returns the chat spans, in end order.
func chatSpans(spans map[string][]*tracepb.Span) []*tracepb.Span {
	var out []*tracepb.Span
	for n, ss := range spans {
		if strings.HasPrefix(n, "chat ") {
			out = append(out, ss...)
		}
	}
	slices.SortFunc(out, func(a, b *tracepb.Span) int { return cmp.Compare(a.EndTimeUnixNano, b.EndTimeUnixNano) })
	return out
}

// chatName is the name of the chat spans ("" when none).
func chatName(spans map[string][]*tracepb.Span) string {
	if c := chatSpans(spans); len(c) > 0 {
		return c[0].Name
	}
	return ""
}

// one returns the only span named name, failing otherwise.
func one(t *testing.T, spans map[string][]*tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	if len(spans[name]) != 1 {
		t.Fatalf("%d spans named %q; want 1 (spans: %v)", len(spans[name]), name, names(spans))
	}
	return spans[name][0]
}

func names(spans map[string][]*tracepb.Span) []string {
	var out []string
	for n, ss := range spans {
		for range ss {
			out = append(out, n)
		}
	}
	return out
}

// isChild reports whether child's parent is parent, in parent's trace.
func isChild(child, parent *tracepb.Span) bool {
	return bytes.Equal(child.ParentSpanId, parent.SpanId) && bytes.Equal(child.TraceId, parent.TraceId)
}

func wantAttrs(t *testing.T, s *tracepb.Span, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := attr(s, k); got != v {
			t.Errorf("span %q: %s = %q; want %q", s.Name, k, got, v)
		}
	}
}

// A prompt whose model calls a tool: one trace whose root is invoke_agent,
// with the two model calls (chat {model}) and the tool call
// (execute_tool glob) under it, in the order they ran, carrying the GenAI
// attributes and strata's; no message content (not opted in); the token
// usage and duration histograms.
func TestToolRunTrace(t *testing.T) {
	t.Setenv(telemetry.CaptureContentEnv, "")
	spans, r, err := run(t, []replay.Response{toolCall(t, "toolu_1", "glob", `{"pattern":"*.md"}`), text(t, "One file: NOTES.md.")}, "Which Markdown files are there?")
	if err != nil {
		t.Fatal(err)
	}
	agent := one(t, spans, "invoke_agent")
	tool := one(t, spans, "execute_tool glob")
	chats := chatSpans(spans)
	if len(agent.ParentSpanId) != 0 || len(chats) != 2 || len(r.spans) != 4 {
		t.Fatalf("spans %v; want a root invoke_agent, 2 chats and a tool", names(spans))
	}
	session := attr(agent, "gen_ai.conversation.id")
	if len(session) != 16 {
		t.Errorf("gen_ai.conversation.id %q; want the 16-hex-digit session id", session)
	}
	wantAttrs(t, agent, map[string]string{"gen_ai.operation.name": "invoke_agent", "strata.layout": strata.DefaultLayout})
	for i, c := range chats {
		if !isChild(c, agent) {
			t.Errorf("chat %d is not a child of invoke_agent", i)
		}
		if m := attr(c, "gen_ai.request.model"); m == "" || c.Name != "chat "+m {
			t.Errorf("chat %d: name %q, gen_ai.request.model %q; want \"chat {model}\"", i, c.Name, m)
		}
		if c.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("chat %d kind %v; want client", i, c.Kind)
		}
		wantAttrs(t, c, map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
			"gen_ai.conversation.id": session, "strata.layout": strata.DefaultLayout})
		for _, k := range []string{"gen_ai.response.model", "gen_ai.response.id", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
			"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens", "strata.breakpoints", "strata.turn.id"} {
			if attr(c, k) == "" {
				t.Errorf("chat %d has no %s", i, k)
			}
		}
		if attr(c, "gen_ai.input.messages") != "" || attr(c, "gen_ai.output.messages") != "" {
			t.Errorf("chat %d carries message content without the opt-in", i)
		}
	}
	if got := attr(chats[0], "gen_ai.response.finish_reasons") + " " + attr(chats[1], "gen_ai.response.finish_reasons"); got != "tool_use end_turn" {
		t.Errorf("finish reasons %q; want tool_use then end_turn", got)
	}
	if !strings.HasSuffix(attr(chats[0], "strata.turn.id"), "/0") || !strings.HasSuffix(attr(chats[1], "strata.turn.id"), "/1") {
		t.Errorf("turn ids %q %q; want turns 0 and 1", attr(chats[0], "strata.turn.id"), attr(chats[1], "strata.turn.id"))
	}
	if !isChild(tool, agent) {
		t.Error("execute_tool is not a child of invoke_agent")
	}
	wantAttrs(t, tool, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "glob",
		"gen_ai.tool.call.id": "toolu_1", "gen_ai.tool.type": "function", "strata.tool.outcome": "succeeded"})
	if attr(tool, "gen_ai.tool.call.arguments") != "" {
		t.Error("the tool span carries its arguments without the opt-in")
	}
	// As they happened: the first call, then the tool, then the second call.
	if !(chats[0].EndTimeUnixNano <= tool.StartTimeUnixNano && tool.EndTimeUnixNano <= chats[1].StartTimeUnixNano &&
		agent.StartTimeUnixNano <= chats[0].StartTimeUnixNano && chats[1].EndTimeUnixNano <= agent.EndTimeUnixNano) {
		t.Errorf("span times out of order: agent %d–%d, chat %d–%d, tool %d–%d, chat %d–%d", agent.StartTimeUnixNano, agent.EndTimeUnixNano,
			chats[0].StartTimeUnixNano, chats[0].EndTimeUnixNano, tool.StartTimeUnixNano, tool.EndTimeUnixNano, chats[1].StartTimeUnixNano, chats[1].EndTimeUnixNano)
	}
	got := map[string]int{}
	for _, m := range r.metrics {
		if h := m.GetHistogram(); h != nil {
			for _, dp := range h.DataPoints {
				got[m.Name] += int(dp.Count)
			}
		}
	}
	if got["gen_ai.client.token.usage"] != 4 || got["gen_ai.client.operation.duration"] != 2 {
		t.Errorf("histogram counts %v; want 4 token usages (input and output of 2 calls) and 2 durations", got)
	}
}

// With the conventions' opt-in, the spans carry the prompt, the answers,
// the tool's arguments and its result.
func TestContentOnlyOnOptIn(t *testing.T) {
	t.Setenv(telemetry.CaptureContentEnv, "true")
	spans, _, err := run(t, []replay.Response{toolCall(t, "toolu_1", "glob", `{"pattern":"*.md"}`), text(t, "One file: NOTES.md.")}, "Which Markdown files are there?")
	if err != nil {
		t.Fatal(err)
	}
	agent := one(t, spans, "invoke_agent")
	tool := one(t, spans, "execute_tool glob")
	last := chatSpans(spans)[1]
	for what, got := range map[string]string{
		"invoke_agent input": attr(agent, "gen_ai.input.messages"), "tool arguments": attr(tool, "gen_ai.tool.call.arguments"),
		"tool result": attr(tool, "gen_ai.tool.call.result"), "last answer": attr(last, "gen_ai.output.messages"),
	} {
		want := map[string]string{"invoke_agent input": "Which Markdown files are there?", "tool arguments": `"pattern":"*.md"`,
			"tool result": "NOTES.md", "last answer": "One file: NOTES.md."}[what]
		if !strings.Contains(got, want) {
			t.Errorf("%s: %q does not contain %q", what, got, want)
		}
	}
}

// A sub-agent's loop is a trace of its own loop span under its parent's
// execute_tool use_subagent span, whose strata.child_loop.id names it.
func TestSubAgentTrace(t *testing.T) {
	spans, _, err := run(t, []replay.Response{
		toolCall(t, "toolu_sub", "use_subagent", `{"task":"list the Markdown files"}`),
		text(t, "NOTES.md"),
		text(t, "The sub-agent found NOTES.md."),
	}, "Delegate: which Markdown files are there?")
	if err != nil {
		t.Fatal(err)
	}
	if len(spans["invoke_agent"]) != 2 {
		t.Fatalf("spans %v; want two invoke_agent (parent and sub-agent)", names(spans))
	}
	child, parent := spans["invoke_agent"][0], spans["invoke_agent"][1] // the child's loop ends first
	tool := one(t, spans, "execute_tool use_subagent")
	if len(parent.ParentSpanId) != 0 || !isChild(tool, parent) || !isChild(child, tool) {
		t.Fatalf("want parent invoke_agent → execute_tool use_subagent → child invoke_agent")
	}
	if attr(child, "strata.trigger") != "sub_agent" || attr(tool, "strata.child_loop.id") != attr(child, "strata.loop.id") || attr(child, "strata.loop.id") == "" {
		t.Errorf("child loop %q (trigger %q); the tool names %q", attr(child, "strata.loop.id"), attr(child, "strata.trigger"), attr(tool, "strata.child_loop.id"))
	}
	var childChats int
	for _, c := range chatSpans(spans) {
		if isChild(c, child) {
			childChats++
		}
	}
	if childChats != 1 {
		t.Errorf("%d chat spans under the sub-agent's loop; want 1", childChats)
	}
}

// A model call the provider refuses: its chat span and the loop's span end
// in error, with error.type the HTTP status.
func TestErrorRunTrace(t *testing.T) {
	refused := replay.Response{Status: 400, Header: map[string][]string{"Content-Type": {"application/json"}},
		Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`)}
	spans, _, err := run(t, []replay.Response{refused}, "hello")
	if err == nil {
		t.Fatal("the run succeeded; want the provider's error")
	}
	agent := one(t, spans, "invoke_agent")
	chat := one(t, spans, chatName(spans))
	if !isChild(chat, agent) {
		t.Error("chat is not a child of invoke_agent")
	}
	for _, s := range []*tracepb.Span{agent, chat} {
		if s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || !strings.Contains(s.Status.GetMessage(), "prompt is too long") {
			t.Errorf("span %s status %v; want an error naming the provider's message", s.Name, s.Status)
		}
	}
	wantAttrs(t, chat, map[string]string{"error.type": "400"})
	if attr(chat, "gen_ai.usage.input_tokens") != "" {
		t.Error("a refused call reports usage")
	}
}
