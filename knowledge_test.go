package strata_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/kiro"
)

// requestMessages decodes the messages of an Anthropic request body as
// text: each message's text and tool_result contents joined.
func requestMessages(t *testing.T, body string) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content []struct {
				Text    string `json:"text"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range req.Messages {
		var b strings.Builder
		for _, c := range m.Content {
			b.WriteString(c.Text)
			for _, cc := range c.Content {
				b.WriteString(cc.Text)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// requestTools returns the tool names of an Anthropic request body.
func requestTools(t *testing.T, body string) []string {
	t.Helper()
	var req struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// The kiro-cli turn anatomy's layer 2, "Knowledge base listing … Indexed
// knowledge contexts for RAG": an agent's knowledgeBase resource is indexed
// when the agent loads, listed in the context message, and searched by the
// model through kiro's knowledge tool, which runs without asking.
func TestKnowledgeBaseListedAndSearched(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "docs", "retry.md"), "# Retries\nFailed uploads are retried five times with jittered backoff.\n")
	writeFile(t, filepath.Join(dir, "docs", "other.md"), "# Other\nNothing to see.\n")
	writeFile(t, filepath.Join(dir, ".kiro", "agents", "kb.json"), `{"name":"kb","prompt":"answer from the docs",
		"tools":["knowledge","fs_read"],
		"resources":[{"type":"knowledgeBase","source":"file://docs","name":"product-docs","description":"how the product works","include":["*.md"]}]}`)
	calls := 0
	m := newScriptedModel(t, func(string) replay.Reply {
		calls++
		if calls == 1 {
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("k1", "knowledge", json.RawMessage(`{"command":"search","query":"how often are uploads retried"}`))}}
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("five times")}}
	})
	var warns []string
	_, s := openScripted(t, strata.Options{Dir: dir, Agent: "kb", Layout: "kiro", Warn: func(s string) { warns = append(warns, s) }}, m)
	if _, err := s.Prompt(t.Context(), "how often are uploads retried?"); err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	b := m.bodies()
	if len(b) != 2 {
		t.Fatalf("want 2 model calls, got %d", len(b))
	}
	if tools := strings.Join(requestTools(t, b[0]), ","); tools != "fs_read,knowledge" {
		t.Errorf("tools offered: %s", tools)
	}
	ctxMsg := requestMessages(t, b[0])[0]
	want := kiro.EntryBegin + "Knowledge bases indexed for this agent"
	if !strings.HasPrefix(ctxMsg, want) || !strings.Contains(ctxMsg, "- product-docs (context_id ") ||
		!strings.Contains(ctxMsg, "how the product works; 2 files, 2 chunks, from "+filepath.Join(dir, "docs")+"\n"+kiro.EntryEnd) {
		t.Errorf("layer 2 missing or wrong:\n%s", ctxMsg)
	}
	msgs := requestMessages(t, b[1])
	result := msgs[len(msgs)-1]
	if !strings.Contains(result, "1. [product-docs] retry.md lines 1-2") || !strings.Contains(result, "jittered backoff") {
		t.Errorf("knowledge search result:\n%s", result)
	}
}

// An agent that names the knowledge tool but has no knowledgeBase resource
// is told the tool is not offered; "@builtin" alone asks for nothing.
func TestKnowledgeToolWithoutBasesWarns(t *testing.T) {
	for _, tc := range []struct {
		tools string
		warn  bool
	}{{`["knowledge","fs_read"]`, true}, {`["@builtin"]`, false}} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ".kiro", "agents", "a.json"), `{"name":"a","prompt":"p","tools":`+tc.tools+`}`)
		var warns []string
		m := newScriptedModel(t, func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}} })
		openScripted(t, strata.Options{Dir: dir, Agent: "a", Warn: func(s string) { warns = append(warns, s) }}, m)
		got := strings.Contains(strings.Join(warns, "\n"), `"knowledge": the agent has no knowledgeBase resources; the knowledge tool is not offered`)
		if got != tc.warn {
			t.Errorf("tools %s: warned %v, want %v (%q)", tc.tools, got, tc.warn, warns)
		}
	}
}
