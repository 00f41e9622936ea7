package providers

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/strata-agent/strata/cachesim"
)

// KiroModel is one model name kiro-cli agents use ("model" in the agent
// file, /model in the chat) and the id each provider knows it by.
type KiroModel struct {
	Name          string // kiro's name, e.g. "claude-sonnet-4.6"
	Anthropic     string // Claude API model id, e.g. "claude-sonnet-4-6"
	Bedrock       string // Bedrock model id without the inference-profile region prefix
	ContextWindow int64  // context window, tokens
}

// KiroModels returns a copy of the kiro name table (see kiroModels), in
// table order (`strata models` prints it).
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

// ModelFor returns the model id to send to provider (a provider
// name: anthropic, bedrock, openai-chat, …) for model: a kiro model name
// (claude-sonnet-4.6, claude-opus-4.6-1m, …; see kiroModels for the
// table and its sources) becomes the provider's id — the Claude API id on
// anthropic, a Bedrock inference-profile id on bedrock (region prefix from
// AWS_REGION: eu-* → "eu.", ap-* → "apac.", else "us."). mapped is false
// (and id = model) when model is not a kiro name or the provider has no id
// for it (the OpenAI and Gemini APIs serve no Claude model).
func ModelFor(provider, model string) (id string, mapped bool) {
	for _, k := range kiroModels {
		if k.Name != model {
			continue
		}
		switch Canonical(provider) {
		case "anthropic":
			return k.Anthropic, true
		case "bedrock":
			return bedrockProfile() + k.Bedrock, true
		}
	}
	return model, false
}

// KiroContextWindow returns the context window in tokens of a model known
// by its kiro name or its Claude API id (0 when not in the table).
func KiroContextWindow(model string) int64 {
	for _, k := range kiroModels {
		if k.Name == model || k.Anthropic == model {
			return k.ContextWindow
		}
	}
	return 0
}

// ContextWindow returns the context window in tokens of a provider
// model id: a kiro name or Claude API id (KiroContextWindow), a Bedrock id
// or inference-profile id of a model in the kiro table, else the window of
// the price table's row (cachesim.Price.Window: every priced model, from
// its provider's docs); 0 when unknown. The agent loop compacts when a
// request would exceed it (docs/loop.md, "compaction").
func ContextWindow(id string) int64 {
	if w := KiroContextWindow(id); w > 0 {
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

// modelID maps model for provider (ModelFor) and, when check
// is set and warn non-nil, warns about an id that is neither mapped nor
// plausibly the provider's own (ownModelID); the id is then sent as is.
func modelID(provider, model string, check bool, warn func(string)) string {
	id, mapped := ModelFor(provider, model)
	if mapped || !check || warn == nil {
		return id
	}
	if re, ok := ownModelID[provider]; ok && !re.MatchString(model) {
		kiro := ""
		if KiroContextWindow(model) > 0 {
			kiro = " (a kiro model name " + provider + " has no id for)"
		}
		warn(fmt.Sprintf("model %q%s is not a known %s model id; sending it as is (see 'strata models')", model, kiro, provider))
	}
	return id
}
