package strata_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// The knowledge tool reads through the same sandbox as fs_read (issue 23,
// item 5): with fs_read denying .env and private/, a knowledge base over
// the whole workspace does not return them, nor a hard link to a file
// outside the workspace, nor a base whose source is ../outside. All three
// used to be indexed and returned by a search.
func TestAttackKnowledgeToolRespectsTheSandbox(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	dir, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	writeFiles(t, root, map[string]string{
		"outside/secret.txt": "zebra OUTSIDE-SECRET",
		"outside/linked.txt": "zebra LINKED-SECRET",
		"ws/.env":            "zebra ENV-SECRET",
		"ws/private/p.txt":   "zebra PRIVATE-SECRET",
		"ws/docs/ok.md":      "zebra PUBLIC-DOC",
		"ws/.kiro/agents/kb.json": `{"name":"kb","tools":["knowledge","fs_read"],
			"toolsSettings":{"fs_read":{"deniedPaths":[".env","private/"]}},
			"resources":[{"type":"knowledgeBase","source":"file://.","name":"all"},
				{"type":"knowledgeBase","source":"file://../outside","name":"out"}]}`,
	})
	if err := os.Link(filepath.Join(outside, "linked.txt"), filepath.Join(dir, "docs", "hardlink.md")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	m := newScriptedModel(t, func(body string) replay.Reply {
		if strings.Contains(body, `"type":"tool_result"`) {
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}}
		}
		return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("k1", "knowledge", json.RawMessage(`{"command":"search","query":"zebra"}`))}}
	})
	var warns []string
	_, s := openScripted(t, strata.Options{Dir: dir, Agent: "kb", Warn: func(w string) { warns = append(warns, w) }}, m)
	if _, err := s.Prompt(t.Context(), "search"); err != nil {
		t.Fatal(err)
	}
	res := resultText(lastResults(t, s)[0])
	for _, leak := range []string{"ENV-SECRET", "PRIVATE-SECRET", "LINKED-SECRET", "OUTSIDE-SECRET"} {
		if strings.Contains(res, leak) {
			t.Errorf("knowledge search returned %s:\n%s", leak, res)
		}
	}
	if !strings.Contains(res, "PUBLIC-DOC") {
		t.Errorf("the allowed document is missing:\n%s", res)
	}
	if w := strings.Join(warns, "\n"); !strings.Contains(w, `"out": source`) || !strings.Contains(w, "outside the workspace") {
		t.Errorf("no warning names the refused source:\n%s", w)
	}
}
