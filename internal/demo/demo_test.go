package demo

import (
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm/replay"
)

// Respond picks each answer from the request's messages: a new prompt gets
// the glob call, the glob's tool_result the fs_read call, the fs_read's
// tool_result the closing text; prompts after the first are numbered by
// the fs_read calls the history already answered and get their own ids.
func TestRespondFollowsTheConversation(t *testing.T) {
	user := `{"role":"user","content":[{"type":"text","text":"hi"}]}`
	result := func(id string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"x"}]}`
	}
	asst := `{"role":"assistant","content":[{"type":"text","text":"ok"}]}`
	firstPrompt := []string{user, asst, result("toolu_strata_demo_01"), asst, result("toolu_strata_demo_02"), asst}
	for _, tc := range []struct {
		name     string
		messages []string
		source   string
		body     string
	}{
		{"new prompt", []string{user}, "demo/turn1.sse", "toolu_strata_demo_01"},
		{"after glob", firstPrompt[:3], "demo/turn2.sse", "toolu_strata_demo_02"},
		{"after fs_read", firstPrompt[:5], "demo/turn3.sse", "only these words"},
		{"second prompt", append(firstPrompt[:6:6], user), "demo prompt 2 step 1", "toolu_strata_demo_2_01"},
		{"second prompt after glob", append(firstPrompt[:6:6], user, asst, result("toolu_strata_demo_2_01")),
			"demo prompt 2 step 2", "toolu_strata_demo_2_02"},
		{"second prompt after fs_read", append(firstPrompt[:6:6], user, asst, result("toolu_strata_demo_2_01"), asst, result("toolu_strata_demo_2_02")),
			"demo prompt 2 step 3", "prompt 2 of an OFFLINE DEMO"},
		{"not a Messages body", nil, "demo/turn1.sse", "toolu_strata_demo_01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"messages":[` + strings.Join(tc.messages, ",") + `]}`
			if tc.messages == nil {
				body = "not json"
			}
			r := Respond(replay.Request{Method: "POST", Path: "/v1/messages", Body: []byte(body)}, 0)
			if r.Status != 0 || r.Source != tc.source || !strings.Contains(string(r.Body), tc.body) {
				t.Errorf("got status %d source %q, want %q with %q in the body:\n%.300s", r.Status, r.Source, tc.source, tc.body, r.Body)
			}
		})
	}
}
