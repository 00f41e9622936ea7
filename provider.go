package strata

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/internal/capture"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// ErrNoProvider is returned (inside a *ConfigError) by Open when no provider
// was named and no API key variable is set.
var ErrNoProvider = errors.New("no provider: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or name a provider")

// providerChoice is the provider a workspace talks to: a spec (by name) or
// an llm.Provider given as is, and the model.
type providerChoice struct {
	name  string
	spec  providers.Spec // zero when given as an llm.Provider
	given llm.Provider
	model string
	opts  providers.Options
	srv   *replay.Server // the server of Options.Replay or Options.Respond
}

func (p providerChoice) close() {
	if p.srv != nil {
		p.srv.Close()
	}
}

// providerAliases maps other provider names Options.ProviderName accepts to
// the provider they select: "openai" (the name `strata bench` and `strata
// replay` give the OpenAI price and cache-simulator family) is the OpenAI
// Chat Completions API.
var providerAliases = map[string]string{"openai": "openai-chat"}

// canonicalProvider returns the provider name providerAliases maps name to,
// else name itself.
func canonicalProvider(name string) string {
	if c, ok := providerAliases[name]; ok {
		return c
	}
	return name
}

// ProviderFromEnv reports the provider Open would choose from the
// environment when Options.ProviderName is empty: the first of
// ANTHROPIC_API_KEY, OPENAI_API_KEY that is set. ok is false when neither is
// (the CLI then plays its offline demo).
func ProviderFromEnv() (name string, ok bool) {
	s, ok := providers.FromEnv()
	return s.Name, ok
}

// chooseProvider resolves o's provider and model (agentModel is the agent
// file's model, "" when none). The client itself is built per session
// (client), so a missing key fails there, not in Render.
func chooseProvider(o Options, agentModel string) (providerChoice, error) {
	model := o.Model
	if model == "" {
		model = agentModel
	}
	if o.Provider != nil {
		if model == "" {
			return providerChoice{}, configErrorf("Options.Model is required with Options.Provider (%s)", o.Provider.Name())
		}
		return providerChoice{name: o.Provider.Name(), given: o.Provider, model: model}, nil
	}
	var spec providers.Spec
	switch {
	case o.ProviderName != "":
		s, err := providers.Lookup(canonicalProvider(o.ProviderName))
		if err != nil {
			return providerChoice{}, &ConfigError{Err: fmt.Errorf("provider: %w; openai is accepted for openai-chat", err)}
		}
		spec = s
	case len(o.Replay) > 0 || o.Respond != nil:
		return providerChoice{}, configErrorf("Options.Replay and Options.Respond need Options.ProviderName: the wire format of the responses")
	default:
		s, ok := providers.FromEnv()
		if !ok {
			return providerChoice{}, &ConfigError{Err: ErrNoProvider}
		}
		spec = s
	}
	pc := providerChoice{name: spec.Name, spec: spec, opts: providers.Options{APIKey: o.APIKey, BaseURL: o.BaseURL, MaxRetries: 2, Limits: o.Limits}}
	if len(o.Replay) > 0 || o.Respond != nil {
		srv, err := replay.NewServer(o.Replay...)
		if len(o.Replay) == 0 {
			srv, err = replay.NewResponder(o.Respond)
		}
		if err != nil {
			return providerChoice{}, err
		}
		pc.srv = srv
		pc.opts = providers.Options{APIKey: "replay", BaseURL: srv.URL(), Limits: o.Limits}
		if model == "" {
			model = "replay"
		}
	}
	if model == "" {
		model = spec.Model
	}
	if model == "" {
		return providerChoice{}, configErrorf("provider %s has no default model: name the model the server serves (--model ID, STRATA_MODEL or the config file's model; Options.Model in Go)", spec.Name)
	}
	pc.model = providerModel(spec.Name, model, checkModel(o), o.Warn)
	return pc, nil
}

// client returns the provider sessions send through.
func (p providerChoice) client() (llm.Provider, error) {
	if p.given != nil {
		return p.given, nil
	}
	c, err := providers.New(p.spec, p.opts)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return c, nil
}

// ErrNoAWSCredentials is wrapped (inside a *ConfigError) by Open's
// sessions when the Bedrock provider is chosen and the AWS SDK's default
// credential chain finds no credentials; the error's text names what to
// set (llm/bedrock).
var ErrNoAWSCredentials = llm.ErrNoCredentials

// ReplayURL returns the base URL of the loopback server playing
// Options.Replay or Options.Respond ("" when there is none).
func (w *Workspace) ReplayURL() string {
	if w.prov.srv == nil {
		return ""
	}
	return w.prov.srv.URL()
}

// capturing returns a provider of the same wire API whose SDK sends nothing:
// its transport records the request (method, URL, body) and fails it. The
// second result returns what was recorded.
func (p providerChoice) capturing() (llm.Provider, func() (capture.Request, bool), error) {
	if p.given != nil {
		return nil, nil, fmt.Errorf("render: the workspace's provider was given as an llm.Provider (%s); "+
			"rendering the wire body needs a provider chosen by name", p.name)
	}
	tr := &capture.Transport{}
	c, err := providers.New(p.spec, providers.Options{APIKey: "render-not-sent", BaseURL: "http://127.0.0.1:1", HTTPClient: tr.Client()})
	if err != nil {
		return nil, nil, &ConfigError{Err: err}
	}
	return c, func() (capture.Request, bool) {
		reqs := tr.Requests()
		if len(reqs) == 0 {
			return capture.Request{}, false
		}
		return reqs[len(reqs)-1], true
	}, nil
}

// errCaptured stops a render's loop once the request was captured.
var errCaptured = errors.New("render: request captured")

// KiroModel is one model name kiro-cli agents use ("model" in the agent
// file, /model in the chat) and the id each provider knows it by.
type KiroModel struct {
	Name          string // kiro's name, e.g. "claude-sonnet-4.6"
	Anthropic     string // Claude API model id, e.g. "claude-sonnet-4-6"
	Bedrock       string // Bedrock model id without the inference-profile region prefix
	ContextWindow int64  // context window, tokens
}

// KiroModels returns a copy of the kiro name table (see kiroModels), in
// table order.
func KiroModels() []KiroModel { return append([]KiroModel(nil), kiroModels...) }

// kiroModels maps kiro's short model names to provider model ids.
//
// Sources: kiro names from the kiro docs "Models" page
// (https://kiro.dev/docs/cli/models/: Claude Opus 4.6/4.5, Sonnet
// 4.6/4.5/4.0, Haiku 4.5; "-1m" names select the 1M-token context window)
// and the agent files in ../shared/data/agents ("model" fields);
// Claude API ids and Bedrock ids from Anthropic's "Models overview"
// (https://docs.claude.com/en/docs/about-claude/models/overview);
// Bedrock's Claude 4.6 ids have no date or ":0" suffix
// (anthropic.claude-opus-4-6-v1, anthropic.claude-sonnet-4-6: Bedrock
// console model catalog, RooCodeInc/Roo-Code issue 11231). Claude 4+
// models on Bedrock are invoked through cross-region inference profiles
// ("us." / "eu." / "apac." + model id; Bedrock user guide "Supported
// Regions and models for inference profiles"). The 1M window needs
// Anthropic's context-1m beta header, which strata does not send: the
// "-1m" names map to the same ids.
var kiroModels = []KiroModel{
	{"claude-opus-4.6", "claude-opus-4-6", "anthropic.claude-opus-4-6-v1", 200_000},
	{"claude-opus-4.6-1m", "claude-opus-4-6", "anthropic.claude-opus-4-6-v1", 1_000_000},
	{"claude-opus-4.5", "claude-opus-4-5-20251101", "anthropic.claude-opus-4-5-20251101-v1:0", 200_000},
	{"claude-sonnet-4.6", "claude-sonnet-4-6", "anthropic.claude-sonnet-4-6", 200_000},
	{"claude-sonnet-4.6-1m", "claude-sonnet-4-6", "anthropic.claude-sonnet-4-6", 1_000_000},
	{"claude-sonnet-4.5", "claude-sonnet-4-5-20250929", "anthropic.claude-sonnet-4-5-20250929-v1:0", 200_000},
	{"claude-sonnet-4.5-1m", "claude-sonnet-4-5-20250929", "anthropic.claude-sonnet-4-5-20250929-v1:0", 1_000_000},
	{"claude-sonnet-4", "claude-sonnet-4-20250514", "anthropic.claude-sonnet-4-20250514-v1:0", 200_000},
	{"claude-sonnet-4.0", "claude-sonnet-4-20250514", "anthropic.claude-sonnet-4-20250514-v1:0", 200_000},
	{"claude-haiku-4.5", "claude-haiku-4-5-20251001", "anthropic.claude-haiku-4-5-20251001-v1:0", 200_000},
}

// modelForProvider returns the model id to send to provider (a provider
// name: anthropic, bedrock, openai-chat, …) for model: a kiro model name
// (claude-sonnet-4.6, claude-opus-4.6-1m, …; see kiroModels for the
// table and its sources) becomes the provider's id — the Claude API id on
// anthropic, a Bedrock inference-profile id on bedrock (region prefix from
// AWS_REGION: eu-* → "eu.", ap-* → "apac.", else "us."). mapped is false
// (and id = model) when model is not a kiro name or the provider has no id
// for it (the OpenAI and Gemini APIs serve no Claude model).
func modelForProvider(provider, model string) (id string, mapped bool) {
	for _, k := range kiroModels {
		if k.Name != model {
			continue
		}
		switch canonicalProvider(provider) {
		case "anthropic":
			return k.Anthropic, true
		case "bedrock":
			return bedrockProfile() + k.Bedrock, true
		}
	}
	return model, false
}

// kiroContextWindow returns the context window in tokens of a model known
// by its kiro name or its Claude API id (0 when not in the table).
func kiroContextWindow(model string) int64 {
	for _, k := range kiroModels {
		if k.Name == model || k.Anthropic == model {
			return k.ContextWindow
		}
	}
	return 0
}

// modelContextWindow returns the context window in tokens of a provider
// model id: a kiro name or Claude API id (kiroContextWindow), a Bedrock id
// or inference-profile id of a model in the kiro table, else the window of
// the price table's row (cachesim.Price.Window: every priced model, from
// its provider's docs); 0 when unknown. The agent loop compacts when a
// request would exceed it (docs/loop.md, "compaction").
func modelContextWindow(id string) int64 {
	if w := kiroContextWindow(id); w > 0 {
		return w
	}
	for _, k := range kiroModels {
		if strings.HasSuffix(id, k.Bedrock) {
			return k.ContextWindow
		}
	}
	if p, ok := cachesim.Lookup(id); ok {
		return p.Window(id)
	}
	return 0
}

// bedrockProfile returns the cross-region inference-profile prefix for
// AWS_REGION.
func bedrockProfile() string {
	r := os.Getenv("AWS_REGION")
	switch {
	case strings.HasPrefix(r, "eu-"):
		return "eu."
	case strings.HasPrefix(r, "ap-"):
		return "apac."
	}
	return "us."
}

// ownModelID matches ids that plausibly name a model of each provider (no
// pattern: any id is plausible, e.g. OpenAI-compatible servers).
var ownModelID = map[string]*regexp.Regexp{
	"anthropic":        regexp.MustCompile(`^claude-`),
	"bedrock":          regexp.MustCompile(`^(arn:aws|((us|eu|apac|au|jp|ca|global|us-gov)\.)?[a-z]+\.[a-z0-9])`),
	"openai-chat":      regexp.MustCompile(`^(gpt-|chatgpt-|o\d|codex-|[^/]+/)`),
	"openai-responses": regexp.MustCompile(`^(gpt-|chatgpt-|o\d|codex-|computer-use)`),
	"gemini":           regexp.MustCompile(`^(models/)?(gemini-|gemma-|learnlm-)`),
}

// checkModel reports whether chooseProvider should warn about unknown model
// ids: not for a replay or a base URL given in Options (such servers name
// their models as they like).
func checkModel(o Options) bool { return len(o.Replay) == 0 && o.Respond == nil && o.BaseURL == "" }

// providerModel maps model for provider (modelForProvider) and, when check
// is set and warn non-nil, warns about an id that is neither mapped nor
// plausibly the provider's own (ownModelID); the id is then sent as is.
func providerModel(provider, model string, check bool, warn func(string)) string {
	id, mapped := modelForProvider(provider, model)
	if mapped || !check || warn == nil {
		return id
	}
	if re, ok := ownModelID[provider]; ok && !re.MatchString(model) {
		kiro := ""
		if kiroContextWindow(model) > 0 {
			kiro = " (a kiro model name " + provider + " has no id for)"
		}
		warn(fmt.Sprintf("model %q%s is not a known %s model id; sending it as is (see 'strata models')", model, kiro, provider))
	}
	return id
}
