package prompt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata/internal/benchcache"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Layout packages register themselves in init; the blank imports of
// bench_test.go bring in every layout of the module (a new layout package
// must be added there). prompt.Names() below lists whatever registered, so
// layouts added later are covered without changing this test.

// knownViolations are scenario/layout pairs this test is known to catch, owned by
// another change: the test skips them with the violation while they fail
// and fails once they pass, so the entry is removed.
var knownViolations = map[string]string{}

// lastBody is a transport that keeps the last request body an SDK sent and
// answers with an error: the provider's real encoder runs, nothing is sent.
type lastBody struct{ body []byte }

var errNotSent = errors.New("conformance: recorded, not sent")

func (t *lastBody) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		t.body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	return nil, errNotSent
}

// encoder is one provider per wire API, built on the real SDK.
type encoder struct {
	api  llm.API
	prov llm.Provider
	tr   *lastBody
}

func encoders(t *testing.T) []encoder {
	t.Setenv("AWS_REGION", "us-east-1")
	var out []encoder
	seen := map[llm.API]bool{}
	for _, s := range providers.Specs {
		if seen[s.API] {
			continue
		}
		seen[s.API] = true
		tr := &lastBody{}
		p, err := providers.New(s, providers.Options{APIKey: "conformance-not-sent", BaseURL: "http://127.0.0.1:1",
			HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			t.Fatalf("provider %s: %v", s.Name, err)
		}
		out = append(out, encoder{api: s.API, prov: p, tr: tr})
	}
	return out
}

// encode returns the wire body the provider's SDK sends for req.
func (e encoder) encode(req *llm.Request) ([]byte, error) {
	e.tr.body = nil
	_, err := e.prov.Stream(context.Background(), req, nil)
	if e.tr.body == nil {
		return nil, fmt.Errorf("no body sent: %v", err)
	}
	return e.tr.body, nil
}

// TestEveryLayoutKeepsProviderConversationRules assembles every call of
// every train trajectory (append and managed scenarios) with every
// registered layout, encodes each request with every wire API's real SDK,
// and checks the encoded body against the rules the providers enforce:
// roles alternate where the API requires it (Anthropic Messages, Bedrock
// Converse, Gemini contents), no message is empty, and every tool call is
// answered by its result in the very next message (Anthropic, Bedrock,
// Gemini) or the items right after it (OpenAI Chat tool messages, Responses
// function_call_output). It checks a deterministic sample, every fifth
// trajectory (every fifteenth with -short), so that the package stays well
// inside go test's 10-minute timeout on a loaded 2-core machine;
// STRATA_FULL=1 checks all of them (docs/bench.md, "Full sweeps").
func TestEveryLayoutKeepsProviderConversationRules(t *testing.T) {
	dir := shared.Path(t, "data/trajectories/mini-swe-agent/train")
	encs := encoders(t)
	for _, sc := range []benchcache.Scenario{benchcache.Append, benchcache.Managed} {
		sessions, err := benchcache.LoadDir(dir, sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range prompt.Names() {
			t.Run(string(sc)+"/"+name, func(t *testing.T) {
				// One goroutine per wire API: each has its own encoder and
				// layout instances.
				found := make([]error, len(encs))
				var wg sync.WaitGroup
				for i, e := range encs {
					wg.Go(func() { found[i] = checkLayout(name, e, sessions) })
				}
				wg.Wait()
				var errs []string
				for i, err := range found {
					if err != nil {
						errs = append(errs, fmt.Sprintf("%s: %v", encs[i].api, err))
					}
				}
				why, known := knownViolations[string(sc)+"/"+name]
				switch {
				case known && len(errs) == 0:
					t.Errorf("layout %s now keeps every rule: remove it from knownViolations", name)
				case known:
					t.Skipf("known violation (%s):\n%s", why, strings.Join(errs, "\n"))
				case len(errs) > 0:
					t.Error(strings.Join(errs, "\n"))
				}
			})
		}
	}
}

// checkLayout runs every session through a fresh instance of the layout
// and returns the first violation.
func checkLayout(name string, e encoder, sessions []*benchcache.Session) error {
	for si, s := range sessions {
		if si%sweepStep() != 0 {
			continue
		}
		layout, err := prompt.Lookup(name)
		if err != nil {
			return err
		}
		for ci, call := range s.Calls {
			pc := call.Context
			pc.Model, pc.MaxTokens, pc.API = "conformance-model", 4096, e.api
			req, _, err := layout.Assemble(&pc)
			if err != nil {
				return fmt.Errorf("%s call %d: assemble: %w", s.Name, ci, err)
			}
			body, err := e.encode(skeleton(req))
			if err != nil {
				return fmt.Errorf("%s call %d: encode: %w", s.Name, ci, err)
			}
			if err := checkBody(e.api, body); err != nil {
				return fmt.Errorf("%s call %d: %w", s.Name, ci, err)
			}
		}
	}
	return nil
}

// sweepStep is the step of the trajectory sample: 1 (all) with
// STRATA_FULL=1, 15 with -short, else 5.
func sweepStep() int {
	switch {
	case os.Getenv("STRATA_FULL") == "1":
		return 1
	case testing.Short():
		return 15
	}
	return 5
}

// skeleton returns req with every non-blank text replaced by "t" (blank
// texts stay as they are): the structure the rules are about — roles,
// blocks, tool ids, emptiness — is unchanged, and the SDK encodes a body a
// hundred times smaller, which keeps the test within its time on 2 cores.
func skeleton(req *llm.Request) *llm.Request {
	short := func(bs []llm.Block) []llm.Block {
		out := make([]llm.Block, len(bs))
		for i, b := range bs {
			if strings.TrimSpace(b.Text) != "" {
				b.Text = "t"
			}
			if len(b.Content) > 0 {
				c := make([]llm.Block, len(b.Content))
				for j, x := range b.Content {
					if strings.TrimSpace(x.Text) != "" {
						x.Text = "t"
					}
					c[j] = x
				}
				b.Content = c
			}
			out[i] = b
		}
		return out
	}
	r := *req
	r.System = short(req.System)
	r.Messages = make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		r.Messages[i] = llm.Message{Role: m.Role, Content: short(m.Content)}
	}
	return &r
}

// TestConversationRulesCatchViolations feeds the checker bodies that break
// each rule, so the property test above cannot pass vacuously.
func TestConversationRulesCatchViolations(t *testing.T) {
	cases := []struct {
		name string
		api  llm.API
		body string
	}{
		{"anthropic blank text message", llm.APIAnthropic, `{"messages":[{"role":"user","content":"a"},{"role":"user","content":" "}]}`},
		{"anthropic empty message", llm.APIAnthropic, `{"messages":[{"role":"user","content":[]}]}`},
		{"anthropic empty text", llm.APIAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`},
		{"anthropic tool_use without result next", llm.APIAnthropic, `{"messages":[{"role":"user","content":"a"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"x","input":{}}]},{"role":"user","content":"b"}]}`},
		{"bedrock same-role neighbours", llm.APIBedrock, `{"messages":[{"role":"assistant","content":[{"text":"a"}]},{"role":"assistant","content":[{"text":"b"}]}]}`},
		{"bedrock toolUse without result next", llm.APIBedrock, `{"messages":[{"role":"user","content":[{"text":"a"}]},` +
			`{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1"}}]},{"role":"user","content":[{"text":"b"}]}]}`},
		{"gemini same-role neighbours", llm.APIGemini, `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"user","parts":[{"text":"b"}]}]}`},
		{"gemini functionCall without response next", llm.APIGemini, `{"contents":[{"role":"user","parts":[{"text":"a"}]},` +
			`{"role":"model","parts":[{"functionCall":{"name":"x"}}]},{"role":"user","parts":[{"text":"b"}]}]}`},
		{"openai-chat empty user", llm.APIOpenAIChat, `{"messages":[{"role":"user","content":""}]}`},
		{"openai-chat tool call unanswered", llm.APIOpenAIChat, `{"messages":[{"role":"user","content":"a"},` +
			`{"role":"assistant","tool_calls":[{"id":"c1"}]},{"role":"user","content":"b"}]}`},
		{"openai-responses call unanswered", llm.APIOpenAIResponses, `{"input":[{"type":"message","role":"user","content":"a"},` +
			`{"type":"function_call","call_id":"c1"},{"type":"message","role":"user","content":"b"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkBody(tc.api, []byte(tc.body)); err == nil {
				t.Errorf("checkBody accepted %s", tc.body)
			}
		})
	}
}

// checkBody checks an encoded request body of the given wire API.
func checkBody(api llm.API, body []byte) error {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	switch api {
	case llm.APIAnthropic:
		// The Anthropic Messages API takes an assistant message first
		// (anthropic-sdk-typescript issue 622) and combines consecutive
		// same-role turns ("Consecutive user or assistant turns in your
		// request will be combined into a single turn", Messages API
		// reference): the panels layout sends both as its design shows.
		return checkTurns(combine(list(doc["messages"]), "role", "content"), "role", "content", anthropicBlocks, "")
	case llm.APIBedrock:
		return checkTurns(list(doc["messages"]), "role", "content", bedrockBlocks, "user")
	case llm.APIGemini:
		return checkTurns(list(doc["contents"]), "role", "parts", geminiBlocks, "user")
	case llm.APIOpenAIChat:
		return checkChat(list(doc["messages"]))
	case llm.APIOpenAIResponses:
		return checkResponses(list(doc["input"]))
	}
	return fmt.Errorf("no rules for API %q", api)
}

func list(v any) []any { l, _ := v.([]any); return l }

func str(v any) string { s, _ := v.(string); return s }

// blockInfo says whether a content block is empty and which tool ids it
// calls or answers.
type blockInfo struct {
	empty          bool
	call, answered string
}

func anthropicBlocks(b any) blockInfo {
	m, _ := b.(map[string]any)
	switch str(m["type"]) {
	case "text":
		return blockInfo{empty: strings.TrimSpace(str(m["text"])) == ""}
	case "tool_use":
		return blockInfo{call: str(m["id"])}
	case "tool_result":
		return blockInfo{answered: str(m["tool_use_id"])}
	}
	return blockInfo{}
}

func bedrockBlocks(b any) blockInfo {
	m, _ := b.(map[string]any)
	switch {
	case m["text"] != nil:
		return blockInfo{empty: strings.TrimSpace(str(m["text"])) == ""}
	case m["toolUse"] != nil:
		return blockInfo{call: str(m["toolUse"].(map[string]any)["toolUseId"])}
	case m["toolResult"] != nil:
		return blockInfo{answered: str(m["toolResult"].(map[string]any)["toolUseId"])}
	}
	return blockInfo{}
}

// geminiBlocks names a functionCall by its id, else by its function name
// (the API often sends no id; a functionResponse then answers by name).
func geminiBlocks(b any) blockInfo {
	m, _ := b.(map[string]any)
	id := func(v any) string {
		f, _ := v.(map[string]any)
		if s := str(f["id"]); s != "" {
			return s
		}
		return str(f["name"])
	}
	switch {
	case m["functionCall"] != nil:
		return blockInfo{call: id(m["functionCall"])}
	case m["functionResponse"] != nil:
		return blockInfo{answered: id(m["functionResponse"])}
	case m["text"] != nil:
		return blockInfo{empty: strings.TrimSpace(str(m["text"])) == "" && m["thoughtSignature"] == nil}
	}
	return blockInfo{}
}

// combine merges consecutive messages of the same role into one, as the
// Anthropic Messages API does before it checks a request.
func combine(msgs []any, roleKey, contentKey string) []any {
	var out []any
	for _, raw := range msgs {
		m, _ := raw.(map[string]any)
		if n := len(out); n > 0 {
			prev := out[n-1].(map[string]any)
			if str(prev[roleKey]) == str(m[roleKey]) {
				prev[contentKey] = append(blocksOf(prev[contentKey]), blocksOf(m[contentKey])...)
				continue
			}
		}
		c := map[string]any{}
		for k, v := range m {
			c[k] = v
		}
		out = append(out, c)
	}
	return out
}

// blocksOf is a message's content as a block list (a string is one text block).
func blocksOf(v any) []any {
	if s, ok := v.(string); ok {
		return []any{map[string]any{"type": "text", "text": s}}
	}
	return list(v)
}

// checkTurns checks a role-alternating message list: the first message has
// role first ("" = either), roles alternate, no message or text block is empty, and every
// tool call is answered in the next message.
func checkTurns(msgs []any, roleKey, contentKey string, info func(any) blockInfo, first string) error {
	if len(msgs) == 0 {
		return errors.New("no messages")
	}
	var prevRole string
	var open []string
	for i, raw := range msgs {
		m, _ := raw.(map[string]any)
		role := str(m[roleKey])
		if i == 0 && first != "" && role != first {
			return fmt.Errorf("message 0 has role %q, want %q", role, first)
		}
		if role == prevRole {
			return fmt.Errorf("messages %d and %d both have role %q: roles must alternate", i-1, i, role)
		}
		prevRole = role
		var blocks []any
		switch c := m[contentKey].(type) {
		case string:
			if strings.TrimSpace(c) == "" {
				return fmt.Errorf("message %d (%s) is empty", i, role)
			}
		case []any:
			blocks = c
		}
		if _, isString := m[contentKey].(string); !isString && len(blocks) == 0 {
			return fmt.Errorf("message %d (%s) has no content", i, role)
		}
		answered := map[string]bool{}
		var calls []string
		for bi, b := range blocks {
			in := info(b)
			if in.empty {
				return fmt.Errorf("message %d (%s) block %d is an empty text", i, role, bi)
			}
			if in.call != "" {
				calls = append(calls, in.call)
			}
			if in.answered != "" {
				answered[in.answered] = true
			}
		}
		for _, id := range open {
			if !answered[id] {
				return fmt.Errorf("tool call %q of message %d is not answered by message %d", id, i-1, i)
			}
		}
		open = calls
	}
	if len(open) > 0 {
		return fmt.Errorf("the last message calls tools %v: a request must end with their results", open)
	}
	return nil
}

// checkChat checks OpenAI Chat messages: no empty message, and every
// assistant tool call answered by the tool messages right after it.
func checkChat(msgs []any) error {
	for i := 0; i < len(msgs); i++ {
		m, _ := msgs[i].(map[string]any)
		role := str(m["role"])
		calls := list(m["tool_calls"])
		if s, ok := m["content"].(string); ok && strings.TrimSpace(s) == "" || m["content"] == nil && len(calls) == 0 {
			return fmt.Errorf("message %d (%s) is empty", i, role)
		}
		if l, ok := m["content"].([]any); ok && len(l) == 0 {
			return fmt.Errorf("message %d (%s) has no content parts", i, role)
		}
		want := map[string]bool{}
		for _, c := range calls {
			want[str(c.(map[string]any)["id"])] = true
		}
		for len(want) > 0 {
			i++
			if i >= len(msgs) {
				return fmt.Errorf("tool calls %v have no tool message", want)
			}
			n, _ := msgs[i].(map[string]any)
			if str(n["role"]) != "tool" || !want[str(n["tool_call_id"])] {
				return fmt.Errorf("message %d (%s) comes before the tool results of %v", i, str(n["role"]), want)
			}
			delete(want, str(n["tool_call_id"]))
		}
	}
	return nil
}

// checkResponses checks OpenAI Responses input items: no empty message and
// every function_call answered before the next message item.
func checkResponses(items []any) error {
	open := map[string]bool{}
	for i, raw := range items {
		it, _ := raw.(map[string]any)
		switch str(it["type"]) {
		case "function_call":
			open[str(it["call_id"])] = true
		case "function_call_output":
			if !open[str(it["call_id"])] {
				return fmt.Errorf("item %d answers call %q that is not open", i, str(it["call_id"]))
			}
			delete(open, str(it["call_id"]))
		default:
			if len(open) > 0 {
				return fmt.Errorf("item %d (%s) comes before the outputs of %v", i, str(it["type"]), open)
			}
			if s, ok := it["content"].(string); ok && strings.TrimSpace(s) == "" {
				return fmt.Errorf("item %d is an empty message", i)
			}
			if l, ok := it["content"].([]any); ok && len(l) == 0 {
				return fmt.Errorf("item %d has no content", i)
			}
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("calls %v have no output", open)
	}
	return nil
}
