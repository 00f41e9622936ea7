package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/capture"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/bedrock"
	"github.com/strata-agent/strata/llm/gemini"
	"github.com/strata-agent/strata/llm/openai"
)

var update = flag.Bool("update", false, "rewrite testdata/knobs.<api>.json")

// knobField is where one knob lands in a wire body.
type knobField struct {
	knob string // the llm.Request field
	path string // dotted path of the JSON member it sets
	// unset is the member's JSON when no knob is set; "" = absent (only
	// Anthropic's required max_tokens has a default).
	unset string
	doc   string // the provider documentation section that defines the member
}

// variant is one more setting of a knob, checked at one path.
type variant struct {
	name   string
	mutate func(*llm.Request)
	path   string
	want   string // JSON of the member; "" = absent
}

// refusal is a knob the API cannot express: Stream must fail before
// sending, with an error containing want.
type refusal struct {
	name   string
	mutate func(*llm.Request)
	want   string
}

// knobAPI is one wire API's knob mapping.
type knobAPI struct {
	api      llm.API
	provider func(*http.Client) (llm.Provider, error)
	set      func(*llm.Request) // every knob the API expresses
	fields   []knobField
	variants []variant
	refused  []refusal
}

func f64(v float64) *float64 { return &v }

// setCommon sets the knobs every API takes the same way.
func setCommon(r *llm.Request) {
	r.MaxTokens = 8192
	r.Temperature = f64(1)
	r.TopP = f64(0.95)
	r.Stop = []string{"</answer>"}
}

func choose(mode llm.ToolChoiceMode, name string) func(*llm.Request) {
	return func(r *llm.Request) { r.ToolChoice = llm.ToolChoice{Mode: mode, Name: name} }
}

const notSent = "http://127.0.0.1:1" // never dialled: the recording transport answers

// knobAPIs lists the five wire APIs. The set request of each is a wire-shape
// check of every knob the API expresses, with values the APIs' rules allow
// together where they can (Claude's extended thinking wants tool_choice auto
// or none, temperature 1 and top_p ≥ 0.95). Some limits are per model and
// only the API knows them: Claude Sonnet 4.5 takes temperature or top_p, not
// both; OpenAI reasoning models take neither at other than its default; so
// a golden is not a request every model accepts. Each field's doc names the
// documentation section the golden was checked against by hand.
var knobAPIs = []knobAPI{
	{
		api: llm.APIAnthropic,
		provider: func(c *http.Client) (llm.Provider, error) {
			return anthropic.New(anthropic.Config{APIKey: "not-sent", BaseURL: notSent, HTTPClient: c}), nil
		},
		set: func(r *llm.Request) {
			setCommon(r)
			r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceAuto, DisableParallel: true}
			r.Reasoning = llm.Reasoning{BudgetTokens: 2048, Effort: "high", Summary: "auto"}
			r.PromptCacheKey = "conv-1" // OpenAI only: must change nothing here
		},
		fields: []knobField{
			{"MaxTokens", "max_tokens", "4096", "Messages API reference, Create a Message: max_tokens (required)"},
			{"Temperature", "temperature", "", "Create a Message: temperature (0.0–1.0)"},
			{"TopP", "top_p", "", "Create a Message: top_p"},
			{"Stop", "stop_sequences", "", "Create a Message: stop_sequences"},
			{"ToolChoice", "tool_choice", "", "Tool use, Forcing tool use; Parallel tool use: disable_parallel_tool_use"},
			{"Reasoning.BudgetTokens", "thinking", "", "Extended thinking: thinking {type: enabled, budget_tokens}"},
			{"Reasoning.Effort", "output_config", "", "Effort: output_config.effort (low, medium, high, xhigh, max)"},
		},
		variants: []variant{
			{"tool_choice any", choose(llm.ToolChoiceAny, ""), "tool_choice", `{"type":"any"}`},
			{"tool_choice tool", choose(llm.ToolChoiceTool, "search"), "tool_choice", `{"type":"tool","name":"search"}`},
			{"tool_choice none", choose(llm.ToolChoiceNone, ""), "tool_choice", `{"type":"none"}`},
			{"tool_choice auto", choose(llm.ToolChoiceAuto, ""), "tool_choice", `{"type":"auto"}`},
			{"summary alone sends nothing", func(r *llm.Request) { r.Reasoning.Summary = "detailed" }, "thinking", ""},
		},
		refused: []refusal{
			{"effort without a Claude level", func(r *llm.Request) { r.Reasoning.Effort = "minimal" }, `reasoning.effort "minimal"`},
			{"budget below 1024", func(r *llm.Request) { r.Reasoning.BudgetTokens = 512 }, "reasoning.budget_tokens 512"},
			{"budget not below max_tokens", func(r *llm.Request) { r.MaxTokens, r.Reasoning.BudgetTokens = 2048, 2048 }, "reasoning.budget_tokens 2048"},
		},
	},
	{
		api: llm.APIOpenAIChat,
		provider: func(c *http.Client) (llm.Provider, error) {
			return openai.NewChat(openai.Config{APIKey: "not-sent", BaseURL: notSent, HTTPClient: c}), nil
		},
		set: func(r *llm.Request) {
			setCommon(r)
			r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "search", DisableParallel: true}
			r.Reasoning = llm.Reasoning{Effort: "high"}
			r.PromptCacheKey = "conv-1"
		},
		fields: []knobField{
			{"MaxTokens", "max_completion_tokens", "", "API reference, Create chat completion: max_completion_tokens (max_tokens is deprecated)"},
			{"Temperature", "temperature", "", "Create chat completion: temperature (0–2)"},
			{"TopP", "top_p", "", "Create chat completion: top_p"},
			{"Stop", "stop", "", "Create chat completion: stop (up to 4 sequences)"},
			{"ToolChoice", "tool_choice", "", "Create chat completion: tool_choice (none, auto, required, or a named function)"},
			{"ToolChoice.DisableParallel", "parallel_tool_calls", "", "Create chat completion: parallel_tool_calls"},
			{"Reasoning.Effort", "reasoning_effort", "", "Create chat completion: reasoning_effort"},
			{"PromptCacheKey", "prompt_cache_key", "", "Create chat completion: prompt_cache_key; Prompt caching guide"},
		},
		variants: []variant{
			{"tool_choice any", choose(llm.ToolChoiceAny, ""), "tool_choice", `"required"`},
			{"tool_choice none", choose(llm.ToolChoiceNone, ""), "tool_choice", `"none"`},
			{"tool_choice auto", choose(llm.ToolChoiceAuto, ""), "tool_choice", `"auto"`},
		},
		refused: []refusal{
			{"thinking budget", func(r *llm.Request) { r.Reasoning.BudgetTokens = 2048 }, "reasoning.budget_tokens 2048"},
			{"reasoning summary", func(r *llm.Request) { r.Reasoning.Summary = "auto" }, `reasoning.summary "auto"`},
		},
	},
	{
		api: llm.APIOpenAIResponses,
		provider: func(c *http.Client) (llm.Provider, error) {
			return openai.NewResponses(openai.Config{APIKey: "not-sent", BaseURL: notSent, HTTPClient: c}), nil
		},
		set: func(r *llm.Request) {
			r.MaxTokens, r.Temperature, r.TopP = 8192, f64(1), f64(0.95)
			r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "search", DisableParallel: true}
			r.Reasoning = llm.Reasoning{Effort: "high", Summary: "auto"}
			r.PromptCacheKey = "conv-1"
		},
		fields: []knobField{
			{"MaxTokens", "max_output_tokens", "", "API reference, Create a model response: max_output_tokens"},
			{"Temperature", "temperature", "", "Create a model response: temperature"},
			{"TopP", "top_p", "", "Create a model response: top_p"},
			{"ToolChoice", "tool_choice", "", "Create a model response: tool_choice (none, auto, required, {type: function, name})"},
			{"ToolChoice.DisableParallel", "parallel_tool_calls", "", "Create a model response: parallel_tool_calls"},
			{"Reasoning", "reasoning", "", "Create a model response: reasoning {effort, summary}; Reasoning guide"},
			{"Reasoning (encrypted state)", "include", "", "Create a model response: include reasoning.encrypted_content (stateless use, store=false)"},
			{"PromptCacheKey", "prompt_cache_key", "", "Create a model response: prompt_cache_key; Prompt caching guide"},
		},
		variants: []variant{
			{"tool_choice any", choose(llm.ToolChoiceAny, ""), "tool_choice", `"required"`},
			{"tool_choice none", choose(llm.ToolChoiceNone, ""), "tool_choice", `"none"`},
			{"tool_choice auto", choose(llm.ToolChoiceAuto, ""), "tool_choice", `"auto"`},
		},
		refused: []refusal{
			{"stop sequences", func(r *llm.Request) { r.Stop = []string{"x"} }, "no stop sequences"},
			{"thinking budget", func(r *llm.Request) { r.Reasoning.BudgetTokens = 2048 }, "reasoning.budget_tokens 2048"},
		},
	},
	{
		api: llm.APIBedrock,
		provider: func(c *http.Client) (llm.Provider, error) {
			return bedrock.New(bedrock.Config{Region: "us-east-1", AccessKeyID: "AKIDNOTSENT", SecretAccessKey: "not-sent", BaseURL: notSent, HTTPClient: c})
		},
		set: func(r *llm.Request) {
			setCommon(r)
			r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceAuto} // Claude's thinking takes auto or none only
			r.Reasoning = llm.Reasoning{BudgetTokens: 2048, Effort: "high", Summary: "auto"}
			r.PromptCacheKey = "conv-1" // OpenAI only: must change nothing here
		},
		fields: []knobField{
			{"MaxTokens", "inferenceConfig.maxTokens", "", "Converse API reference, InferenceConfiguration: maxTokens"},
			{"Temperature", "inferenceConfig.temperature", "", "InferenceConfiguration: temperature"},
			{"TopP", "inferenceConfig.topP", "", "InferenceConfiguration: topP"},
			{"Stop", "inferenceConfig.stopSequences", "", "InferenceConfiguration: stopSequences"},
			{"ToolChoice", "toolConfig.toolChoice", "", "ToolConfiguration / ToolChoice: auto, any, tool {name} (no none)"},
			{"Reasoning.BudgetTokens", "additionalModelRequestFields.thinking", "", "Bedrock user guide, Claude extended thinking: additionalModelRequestFields.thinking"},
			{"Reasoning.Effort", "additionalModelRequestFields.output_config", "", "Anthropic docs, Effort (Claude on Bedrock reads output_config from additionalModelRequestFields)"},
		},
		variants: []variant{
			{"tool_choice any", choose(llm.ToolChoiceAny, ""), "toolConfig.toolChoice", `{"any":{}}`},
			{"tool_choice tool", choose(llm.ToolChoiceTool, "search"), "toolConfig.toolChoice", `{"tool":{"name":"search"}}`},
			{"tool_choice none withholds the tools", choose(llm.ToolChoiceNone, ""), "toolConfig", ""},
		},
		refused: []refusal{
			{"parallel switch", func(r *llm.Request) { r.ToolChoice.DisableParallel = true }, "tool_choice.disable_parallel"},
			{"none with tool history", func(r *llm.Request) {
				r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceNone}
				r.Messages = append(r.Messages, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUseBlock("t1", "search", json.RawMessage(`{"q":"x"}`))}},
					llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("t1", "found", false)}})
			}, "tool_choice none"},
			{"effort without a Claude level", func(r *llm.Request) { r.Reasoning.Effort = "minimal" }, `reasoning.effort "minimal"`},
			{"budget below 1024", func(r *llm.Request) { r.Reasoning.BudgetTokens = 512 }, "reasoning.budget_tokens 512"},
		},
	},
	{
		api: llm.APIGemini,
		provider: func(c *http.Client) (llm.Provider, error) {
			return gemini.New(gemini.Config{APIKey: "not-sent", BaseURL: notSent, HTTPClient: c})
		},
		set: func(r *llm.Request) {
			setCommon(r)
			r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "search"}
			r.Reasoning = llm.Reasoning{BudgetTokens: 2048, Summary: "auto"}
			r.PromptCacheKey = "conv-1" // OpenAI only: must change nothing here
		},
		fields: []knobField{
			{"MaxTokens", "generationConfig.maxOutputTokens", "", "API reference, GenerationConfig: maxOutputTokens"},
			{"Temperature", "generationConfig.temperature", "", "GenerationConfig: temperature"},
			{"TopP", "generationConfig.topP", "", "GenerationConfig: topP"},
			{"Stop", "generationConfig.stopSequences", "", "GenerationConfig: stopSequences"},
			{"ToolChoice", "toolConfig", "", "Function calling, function calling modes: functionCallingConfig {mode, allowedFunctionNames}"},
			{"Reasoning", "generationConfig.thinkingConfig", "", "Thinking: thinkingConfig {thinkingBudget, includeThoughts} (thought summaries)"},
		},
		variants: []variant{
			{"tool_choice any", choose(llm.ToolChoiceAny, ""), "toolConfig", `{"functionCallingConfig":{"mode":"ANY"}}`},
			{"tool_choice none", choose(llm.ToolChoiceNone, ""), "toolConfig", `{"functionCallingConfig":{"mode":"NONE"}}`},
			{"tool_choice auto", choose(llm.ToolChoiceAuto, ""), "toolConfig", `{"functionCallingConfig":{"mode":"AUTO"}}`},
			{"effort is thinkingLevel", func(r *llm.Request) { r.Reasoning = llm.Reasoning{Effort: "low"} }, "generationConfig.thinkingConfig",
				`{"includeThoughts":true,"thinkingLevel":"LOW"}`},
			{"summary alone includes thoughts", func(r *llm.Request) { r.Reasoning = llm.Reasoning{Summary: "auto"} }, "generationConfig.thinkingConfig",
				`{"includeThoughts":true}`},
		},
		refused: []refusal{
			{"parallel switch", func(r *llm.Request) { r.ToolChoice.DisableParallel = true }, "tool_choice.disable_parallel"},
			{"budget and level", func(r *llm.Request) { r.Reasoning = llm.Reasoning{BudgetTokens: 2048, Effort: "high"} }, "not both"},
			{"unknown level", func(r *llm.Request) { r.Reasoning = llm.Reasoning{Effort: "xhigh"} }, `reasoning.effort "xhigh"`},
		},
	},
}

// baseRequest is the conversation every knob request carries: a system
// block, one user message and two tools.
func baseRequest(api llm.API) *llm.Request {
	model := map[llm.API]string{llm.APIAnthropic: "claude-sonnet-4-5", llm.APIOpenAIChat: "gpt-5-mini", llm.APIOpenAIResponses: "gpt-5-mini",
		llm.APIBedrock: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", llm.APIGemini: "gemini-2.5-flash"}[api]
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	return &llm.Request{
		Model:    model,
		System:   []llm.Block{llm.TextBlock("You answer briefly.")},
		Messages: []llm.Message{llm.UserText("Find the README.")},
		Tools:    []llm.ToolSpec{{Name: "read_file", Description: "Read a file.", InputSchema: schema}, {Name: "search", Description: "Search the tree.", InputSchema: schema}},
	}
}

// send streams req through a's real provider over a recording transport
// and returns the captured body, or the Stream error when nothing was sent.
func send(t *testing.T, a knobAPI, req *llm.Request) ([]byte, error) {
	t.Helper()
	tr := &capture.Transport{}
	p, err := a.provider(tr.Client())
	if err != nil {
		t.Fatal(err)
	}
	if p.API() != a.api {
		t.Fatalf("provider speaks %s, want %s", p.API(), a.api)
	}
	_, err = p.Stream(context.Background(), req, nil)
	reqs := tr.Requests()
	if len(reqs) == 0 {
		if err == nil {
			t.Fatal("Stream sent nothing and returned no error")
		}
		return nil, err
	}
	if !errors.Is(err, capture.ErrNotSent) {
		t.Fatalf("Stream error %v, want the recording transport's", err)
	}
	return reqs[len(reqs)-1].Body, nil
}

func mustSend(t *testing.T, a knobAPI, req *llm.Request) map[string]any {
	t.Helper()
	body, err := send(t, a, req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	return m
}

// member returns the JSON member at a dotted path.
func member(m map[string]any, path string) (any, bool) {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// setMember sets (v != nil) or deletes the member at a dotted path.
func setMember(m map[string]any, path string, v any) {
	k, rest, nested := strings.Cut(path, ".")
	if !nested {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return
	}
	if sub, ok := m[k].(map[string]any); ok {
		setMember(sub, rest, v)
	}
}

// pruneEmpty deletes members that are empty objects, recursively: an empty
// generationConfig or inferenceConfig is the same request as none.
func pruneEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok && len(pruneEmpty(sub)) == 0 {
			delete(m, k)
		}
	}
	return m
}

// canonical re-encodes a JSON text with sorted keys.
func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return jsonOf(t, v)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestKnobGoldens sends, per wire API, one request setting every knob the API
// expresses through the real provider and its SDK over a recording
// transport, and checks:
//
//   - the captured body equals testdata/knobs.<api>.json (indented; rewrite
//     with -update and review the diff against the doc sections in
//     knobAPIs);
//   - every knob's member is present, and removing those members from it
//     gives exactly the body of the same request with no knob set (so the
//     knobs touch nothing else, and unset knobs send nothing);
//   - each variant (other tool choice modes, other reasoning forms) lands as
//     documented;
//   - each knob the API cannot express fails Stream before anything is sent,
//     with an error naming it.
func TestKnobGoldens(t *testing.T) {
	for _, a := range knobAPIs {
		t.Run(string(a.api), func(t *testing.T) {
			req := baseRequest(a.api)
			a.set(req)
			raw, err := send(t, a, req)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			var out bytes.Buffer
			if err := json.Indent(&out, bytes.TrimSpace(raw), "", "  "); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			out.WriteByte('\n')
			golden := filepath.Join("testdata", "knobs."+string(a.api)+".json")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want, err := os.ReadFile(golden); err != nil {
				t.Fatalf("%v (run 'go test ./llm -run TestKnobGoldens -update' and review the file)", err)
			} else if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("body differs from %s (review, then -update):\n got %s", golden, out.Bytes())
			}

			set := mustSend(t, a, req)
			unset := mustSend(t, a, baseRequest(a.api))
			for _, f := range a.fields {
				if _, ok := member(set, f.path); !ok {
					t.Errorf("%s: %s missing from the body (%s)", f.knob, f.path, f.doc)
				}
				got, ok := member(unset, f.path)
				switch {
				case f.unset == "" && ok:
					t.Errorf("%s unset: %s sent as %s", f.knob, f.path, jsonOf(t, got))
				case f.unset != "" && jsonOf(t, got) != canonical(t, f.unset):
					t.Errorf("%s unset: %s is %s, want %s", f.knob, f.path, jsonOf(t, got), f.unset)
				}
				var def any
				if f.unset != "" {
					def = got
				}
				setMember(set, f.path, def)
			}
			if !reflect.DeepEqual(pruneEmpty(set), pruneEmpty(unset)) {
				t.Errorf("the knobs changed more than their members:\n set minus knobs %s\n unset           %s", jsonOf(t, set), jsonOf(t, unset))
			}

			for _, v := range a.variants {
				r := baseRequest(a.api)
				v.mutate(r)
				got, ok := member(mustSend(t, a, r), v.path)
				switch {
				case v.want == "" && ok:
					t.Errorf("%s: %s sent as %s, want absent", v.name, v.path, jsonOf(t, got))
				case v.want != "" && (!ok || jsonOf(t, got) != canonical(t, v.want)):
					t.Errorf("%s: %s is %s, want %s", v.name, v.path, jsonOf(t, got), v.want)
				}
			}

			for _, rf := range a.refused {
				r := baseRequest(a.api)
				a.set(r)
				rf.mutate(r)
				if _, err := send(t, a, r); err == nil || !strings.Contains(err.Error(), rf.want) {
					t.Errorf("%s: sent, or error %v; want an error naming %q before sending", rf.name, err, rf.want)
				}
			}
		})
	}
}
