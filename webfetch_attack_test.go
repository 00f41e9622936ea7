package strata_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// A model uses web_fetch to reach the machine's own network (issue 23):
// by default a loopback service (standing in for an internal one) and the
// cloud metadata address are refused; Options.WebFetchAllowPrivate opens
// loopback and private addresses, never the metadata one. The loopback
// service used to be fetched.
func TestAttackWebFetchRefusesInternalAddresses(t *testing.T) {
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("INTERNAL-ONLY"))
	}))
	defer internal.Close()
	for _, c := range []struct {
		allow bool
		want  []string // per call: the text its result must hold
	}{
		{false, []string{"loopback address", "link-local"}},
		{true, []string{"INTERNAL-ONLY", "link-local"}},
	} {
		t.Setenv("HOME", t.TempDir())
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ".kiro", "agents", "w.json"), `{"name":"w","tools":["web_fetch"],"allowedTools":["web_fetch"]}`)
		fetch := func(id, url string) llm.Block {
			in, _ := json.Marshal(map[string]string{"url": url})
			return llm.ToolUseBlock(id, "web_fetch", in)
		}
		m := newScriptedModel(t, func(body string) replay.Reply {
			if strings.Contains(body, `"type":"tool_result"`) {
				return replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}}
			}
			return replay.Reply{Blocks: []llm.Block{fetch("a", internal.URL), fetch("b", "http://169.254.169.254/latest/meta-data/")}}
		})
		_, s := openScripted(t, strata.Options{Dir: dir, Agent: "w", WebFetchAllowPrivate: c.allow}, m)
		if _, err := s.Prompt(t.Context(), "fetch"); err != nil {
			t.Fatal(err)
		}
		for i, r := range lastResults(t, s) {
			if txt := resultText(r); !strings.Contains(txt, c.want[i]) {
				t.Errorf("allow private %v, call %d: %q; want %q", c.allow, i, txt, c.want[i])
			}
		}
	}
}
