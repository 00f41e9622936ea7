package demo

import (
	"fmt"
	"regexp"
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

// The demo's input tokens are the request's size (≈4 bytes per token), in
// every answer: a longer conversation reports more input tokens. (They were
// the recording's fixed numbers: every answer of a second prompt reported
// 1312, fewer than the first prompt's last call, and never grew.)
func TestInputTokensFollowTheRequest(t *testing.T) {
	user := `{"role":"user","content":[{"type":"text","text":"hi"}]}`
	pad := `{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("x", 4000) + `"}]}`
	asst := `{"role":"assistant","content":[{"type":"text","text":"ok"}]}`
	result := func(id string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"x"}]}`
	}
	first := []string{user, asst, result("toolu_strata_demo_01"), asst, result("toolu_strata_demo_02"), asst}
	for _, msgs := range [][]string{
		{user}, {pad, user}, first[:3], append([]string{pad}, first[:3]...),
		append(first[:6:6], user), append(first[:6:6], pad, user),
	} {
		body := `{"messages":[` + strings.Join(msgs, ",") + `]}`
		r := Respond(replay.Request{Method: "POST", Path: "/v1/messages", Body: []byte(body)}, 0)
		want := fmt.Sprintf(`"input_tokens":%d`, (len(body)+3)/4)
		if got := regexp.MustCompile(`"input_tokens":\d+`).FindAllString(string(r.Body), -1); len(got) == 0 || got[0] != want {
			t.Errorf("%s: input_tokens %q, want %s", r.Source, got, want)
		}
	}
}
