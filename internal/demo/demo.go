// Package demo holds the offline demo that `strata run`, `strata chat` and
// `strata acp` play when no API key is set: an Anthropic Messages "model",
// authored for strata (not captured from a model), that answers every prompt
// of a conversation the same way: it lists the working directory with glob,
// reads the start of README.md with fs_read, and closes with a text that
// says plainly it is a recording. The tool calls are executed for real by
// the loop; only the model's words are recorded. The first prompt's three
// streams are embedded files (turn1..3.sse) so an installed binary works
// anywhere; later prompts are authored with replay.AnthropicStream. Each
// answer's input_tokens is the size of the request it answers (≈4 bytes
// per token), so the demo's usage grows with the conversation as a model's
// would; its output tokens are the recording's.
package demo

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

//go:embed turn*.sse
var files embed.FS

// Model is the model name the demo streams report.
const Model = "strata-demo-replay"

// Script returns the first prompt's responses in the order the loop requests
// them (glob, fs_read, closing text): three Anthropic Messages SSE streams.
func Script() ([]replay.Response, error) {
	var out []replay.Response
	for i := 1; i <= 3; i++ {
		r, err := embedded(i)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func embedded(step int) (replay.Response, error) {
	name := fmt.Sprintf("turn%d.sse", step)
	b, err := files.ReadFile(name)
	if err != nil {
		return replay.Response{}, fmt.Errorf("demo: %w", err)
	}
	return replay.Response{Body: b, Source: "demo/" + name,
		Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}}, nil
}

// demoID matches the demo's tool_use ids: toolu_strata_demo_0<step> for the
// first prompt (the embedded streams), toolu_strata_demo_<prompt>_0<step>
// for later ones.
var demoID = regexp.MustCompile(`^toolu_strata_demo_(?:(\d+)_)?0([12])$`)

// Respond answers one Anthropic Messages request (POST /v1/messages) of the
// demo conversation from its content, so a chat gets an answer for every
// prompt: when the last message holds the tool_result of the demo's glob
// call, it answers with the fs_read call; of the fs_read call, with the
// closing text; otherwise (a new prompt) with the glob call of prompt n,
// where n is 1 + the number of fs_read calls the history already answered.
// A body that is not a Messages request gets the first step. delay is
// slept before each streamed event (--replay-delay). Safe for concurrent
// use.
func Respond(req replay.Request, delay time.Duration) replay.Response {
	r, err := respond(req.Body)
	if err != nil {
		return replay.Response{Status: http.StatusInternalServerError,
			Header: http.Header{"Content-Type": {"application/json"}},
			Body:   []byte(fmt.Sprintf(`{"type":"error","error":{"type":"api_error","message":%q}}`, "strata demo: "+err.Error()))}
	}
	r.Body = inputTokens.ReplaceAll(r.Body, []byte(fmt.Sprintf(`"input_tokens":%d`, (len(req.Body)+3)/4)))
	r.Delay = delay
	return r
}

// inputTokens matches a stream's input_tokens (message_start, and
// message_delta when it has them): Respond sets it to the request's size
// at ≈4 bytes per token, the estimate strata uses where it has no
// tokenizer (the recorded and authored streams carry fixed numbers, so
// a later prompt reported fewer input tokens than the first).
var inputTokens = regexp.MustCompile(`"input_tokens":\d+`)

// message is the part of an Anthropic Messages request the demo reads.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or content blocks
}

func respond(body []byte) (replay.Response, error) {
	var req struct {
		Messages []message `json:"messages"`
	}
	_ = json.Unmarshal(body, &req) // not a Messages body: answer as a new prompt
	done := 0                      // fs_read calls the history answered
	prompt, step := 0, 1
	for i, m := range req.Messages {
		var blocks []struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil || m.Role != "user" {
			continue
		}
		for _, b := range blocks {
			sm := demoID.FindStringSubmatch(b.ToolUseID)
			if b.Type != "tool_result" || sm == nil {
				continue
			}
			n := 1
			if sm[1] != "" {
				n, _ = strconv.Atoi(sm[1])
			}
			if sm[2] == "2" {
				done++
			}
			if i == len(req.Messages)-1 {
				prompt, step = n, map[string]int{"1": 2, "2": 3}[sm[2]]
			}
		}
	}
	if prompt == 0 {
		prompt = done + 1
	}
	if prompt == 1 {
		return embedded(step)
	}
	return authored(prompt, step)
}

// authored writes step (1 glob, 2 fs_read, 3 closing text) of prompt n ≥ 2
// with the words of the embedded streams.
func authored(n, step int) (replay.Response, error) {
	id := func(s int) string { return fmt.Sprintf("toolu_strata_demo_%d_0%d", n, s) }
	msg := fmt.Sprintf("msg_strata_demo_%d_%d", n, step)
	var blocks []llm.Block
	switch step {
	case 1:
		blocks = []llm.Block{llm.TextBlock("I'll list what is at the top level of this directory again."),
			llm.ToolUseBlock(id(1), "glob", json.RawMessage(`{"pattern":"*"}`))}
	case 2:
		blocks = []llm.Block{llm.TextBlock("Now let me read the beginning of the README, if there is one."),
			llm.ToolUseBlock(id(2), "fs_read", json.RawMessage(`{"operations":[{"mode":"Line","path":"README.md","start_line":1,"end_line":15}]}`))}
	default:
		blocks = []llm.Block{llm.TextBlock(fmt.Sprintf("This is prompt %d of an OFFLINE DEMO: I did not read your prompt, "+
			"because no model is answering. The directory listing and the README lines above come from the glob and "+
			"fs_read tools, which really ran in your working directory; these words are a recording, the same for "+
			"every prompt. Set ANTHROPIC_API_KEY or OPENAI_API_KEY to ask a real model.", n))}
	}
	r, err := replay.AnthropicStream(msg, llm.Usage{Input: 1312, Output: 60}, "", blocks...)
	if err != nil {
		return replay.Response{}, fmt.Errorf("demo: prompt %d step %d: %w", n, step, err)
	}
	r.Source = fmt.Sprintf("demo prompt %d step %d", n, step)
	return r, nil
}
