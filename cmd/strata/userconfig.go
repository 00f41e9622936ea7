package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/prompt"
)

// setting is one default the user config file may set. Precedence, highest
// first: the command's flag, the environment variable env, the config
// file, the flag's built-in default.
type setting struct {
	key   string // YAML key in config.yaml
	flag  string // flag name of run, chat, acp and render (without --)
	env   string // variable overriding the file ("" = none)
	kind  string // "string", "int", "bool" or "duration"
	check func(string) error
}

// settings are the keys of config.yaml besides base_urls.
var settings = []setting{
	{key: "provider", flag: "provider", env: "STRATA_PROVIDER", kind: "string", check: checkProviderName},
	{key: "model", flag: "model", env: "STRATA_MODEL", kind: "string"},
	{key: "layout", flag: "layout", env: "STRATA_LAYOUT", kind: "string", check: checkLayoutName},
	{key: "approve", flag: "approve", env: "STRATA_APPROVE", kind: "string", check: func(s string) error { _, err := approvalMode(s); return err }},
	{key: "max_turns", flag: "max-turns", kind: "int"},
	{key: "max_tokens", flag: "max-tokens", kind: "int"},
	{key: "max_session_tokens", flag: "max-session-tokens", kind: "int"},
	{key: "stream_idle_timeout", flag: "stream-idle-timeout", kind: "duration"},
	{key: "max_retry_delay", flag: "max-retry-delay", kind: "duration"},
	{key: "request_timeout", flag: "request-timeout", kind: "duration"},
	{key: "keepalive", flag: "keepalive", kind: "string", check: checkKeepAlive},          // chat, acp and worker
	{key: "store", flag: "store", env: "STRATA_STORE", kind: "string", check: checkStore}, // --db is its older name
	{key: "max_subagent_depth", flag: "max-subagent-depth", kind: "int"},
	{key: "max_subagents_per_response", flag: "max-subagents-per-response", kind: "int"},
	{key: "max_tool_calls_per_response", flag: "max-tool-calls-per-response", kind: "int"},
	{key: "web_fetch_private", flag: "web-fetch-private", kind: "bool"},
}

// simCommands are the commands whose --provider names a cache simulator
// and --model a price-table model (bench cache, replay). A provider or model
// from the environment or the config file that such a command cannot price
// is not used there: a warning says so and the flag's default applies (the
// same file serves run, whose providers include ones no simulator models).
var simCommands = []string{"strata bench cache", "strata replay"}

// userConfig is a parsed config file: the value and line of each key set,
// and the base URL of each provider (base_urls: {PROVIDER: URL}).
type userConfig struct {
	path     string
	values   map[string]string // setting key → value as written
	lines    map[string]int    // setting key or "base_urls.PROVIDER" → line
	baseURLs map[string]string // provider name → URL
}

// configPath is $STRATA_CONFIG, else os.UserConfigDir()/strata/config.yaml
// (~/.config/strata/config.yaml on Linux, ~/Library/Application
// Support/strata/config.yaml on macOS); "" when there is no config dir.
func configPath() string {
	if p := os.Getenv("STRATA_CONFIG"); p != "" {
		return p
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "strata", "config.yaml")
}

// yamlLineRE splits a yaml.v3 syntax error, "yaml: line N: MESSAGE".
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// loadUserConfig reads the config file at path. A missing file is an empty
// config (nil error); a file that is not YAML, an unknown key, a value of the
// wrong type or an invalid value is a usage error "PATH:LINE: KEY: …".
func loadUserConfig(path string) (*userConfig, error) {
	uc := &userConfig{path: path, values: map[string]string{}, lines: map[string]int{}, baseURLs: map[string]string{}}
	if path == "" {
		return uc, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return uc, nil
	}
	if err != nil {
		return nil, usagef("config file: %v (set STRATA_CONFIG to another file)", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			return nil, usagef("%s:%s: not valid YAML: %s", path, m[1], m[2])
		}
		return nil, usagef("config file %s: not valid YAML: %v", path, err)
	}
	if len(doc.Content) == 0 {
		return uc, nil // empty file
	}
	top := doc.Content[0]
	bad := func(n *yaml.Node, key, format string, a ...any) error {
		return usagef("%s:%d: %s: %s", path, n.Line, key, fmt.Sprintf(format, a...))
	}
	if top.Kind != yaml.MappingNode {
		return nil, usagef("%s:%d: want a mapping of settings (key: value), e.g. 'layout: cachefit'", path, top.Line)
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value == "base_urls" {
			if err := uc.readBaseURLs(v, bad); err != nil {
				return nil, err
			}
			continue
		}
		j := slices.IndexFunc(settings, func(s setting) bool { return s.key == k.Value })
		if j < 0 {
			hint := ""
			if near := nearest(k.Value, append(settingKeys(), "base_urls")); near != "" {
				hint = fmt.Sprintf("did you mean %q? ", near)
			}
			return nil, bad(k, k.Value, "unknown key (%svalid: %s, base_urls)", hint, strings.Join(settingKeys(), ", "))
		}
		if v.Kind != yaml.ScalarNode {
			return nil, bad(v, k.Value, "want a single value, not a %s", kindName(v.Kind))
		}
		if err := settings[j].validate(v.Value); err != nil {
			return nil, bad(v, k.Value, "%v", strings.TrimPrefix(err.Error(), "unknown --"+settings[j].flag+" "))
		}
		uc.values[k.Value], uc.lines[k.Value] = v.Value, v.Line
	}
	return uc, nil
}

// readBaseURLs reads base_urls: {PROVIDER: URL}.
func (uc *userConfig) readBaseURLs(v *yaml.Node, bad func(*yaml.Node, string, string, ...any) error) error {
	if v.Kind != yaml.MappingNode {
		return bad(v, "base_urls", "want a mapping of provider names to URLs, e.g. 'anthropic: http://127.0.0.1:8080'")
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		pk, pv := v.Content[i], v.Content[i+1]
		key := "base_urls." + pk.Value
		name := pk.Value
		if name == "openai" {
			name = "openai-chat"
		}
		if _, err := providers.Lookup(name); err != nil {
			return bad(pk, key, "%v", err)
		}
		if pv.Kind != yaml.ScalarNode || !strings.Contains(pv.Value, "://") {
			return bad(pv, key, "want a URL such as http://127.0.0.1:8080, got %q", pv.Value)
		}
		uc.baseURLs[name], uc.lines[key] = pv.Value, pv.Line
	}
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

func settingKeys() []string {
	keys := make([]string, len(settings))
	for i, s := range settings {
		keys[i] = s.key
	}
	return keys
}

// validate checks a value of the setting's kind.
func (s setting) validate(v string) error {
	switch s.kind {
	case "int":
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
			return fmt.Errorf("want a whole number ≥ 0, got %q", v)
		}
	case "bool":
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
	case "duration":
		if d, err := time.ParseDuration(v); err != nil || d < 0 {
			return fmt.Errorf("want a duration such as 90s or 2m (0 = no limit), got %q", v)
		}
	}
	if s.check != nil {
		return s.check(v)
	}
	return nil
}

func checkProviderName(s string) error {
	if s == "openai" {
		return nil
	}
	if _, err := providers.Lookup(s); err != nil {
		return fmt.Errorf("%v; openai is accepted for openai-chat", err)
	}
	return nil
}

func checkLayoutName(s string) error {
	if !slices.Contains(prompt.Names(), s) {
		return fmt.Errorf("unknown layout %q (valid: %s)", s, strings.Join(prompt.Names(), ", "))
	}
	return nil
}

// origin is where an effective setting came from, for 'strata config'.
type origin struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"` // "default", "flag --X", "env VAR", or "PATH:LINE"
	// Commands are the commands the setting applies to (those with its
	// flag; for base_urls those that call a provider), for 'strata config'.
	Commands []string `json:"commands,omitempty"`
}

// applyUserConfig sets every flag of c named by a setting that the user did
// not pass from the environment or the config file, and — for commands that
// call a provider — sets each provider's base-URL variable from base_urls
// when the environment does not. It returns where each setting came from.
// Commands without any setting's flag are left alone (the file is not
// read). On simCommands a provider or model they cannot price is skipped
// with a warning.
func applyUserConfig(c *cobra.Command) ([]origin, error) {
	if !hasSettingFlag(c) {
		return nil, nil
	}
	uc, err := loadUserConfig(configPath())
	if err != nil {
		return nil, err
	}
	sim := slices.Contains(simCommands, c.CommandPath())
	var out []origin
	for _, s := range settings {
		f := c.Flags().Lookup(s.flag)
		if f == nil {
			continue
		}
		o := origin{Key: s.key, Value: f.Value.String(), Source: "default", Commands: commandsWithFlag(c.Root(), s.flag)}
		switch env := os.Getenv(s.env); {
		case f.Changed:
			o.Source = "flag --" + s.flag
		case s.key == "store" && c.Flags().Changed("db"):
			o.Source = "flag --db"
		case s.env != "" && env != "":
			if err := s.validate(env); err != nil {
				return nil, usagef("%s=%s: %v", s.env, env, err)
			}
			o.Value, o.Source = env, "env "+s.env
		case uc.values[s.key] != "":
			o.Value, o.Source = uc.values[s.key], fmt.Sprintf("%s:%d", uc.path, uc.lines[s.key])
		}
		if !sim && s.key == "model" && o.Source != "default" && !f.Changed {
			if why := modelUnfit(o, out); why != "" {
				warn(fmt.Sprintf("model %s (from %s) is not used: %s; the provider's default model is (pass --model to choose)",
					o.Value, o.Source, why))
				o.Value, o.Source = f.DefValue, "default"
			}
		}
		if sim && o.Source != "default" && !f.Changed {
			if why := simUnfit(c, s.key, o.Value); why != "" {
				warn(fmt.Sprintf("%s %s (from %s) is not used by '%s': %s; it uses --%s %s (pass --%s to choose)",
					s.key, o.Value, o.Source, c.CommandPath(), why, s.flag, f.DefValue, s.flag))
				o.Value, o.Source = f.DefValue, "default"
			}
		}
		if o.Source != "default" && !f.Changed {
			if err := c.Flags().Set(s.flag, o.Value); err != nil {
				return nil, usagef("%s (from %s): %v", s.key, o.Source, err)
			}
			f.Changed = false // still not given on the command line
		}
		out = append(out, o)
	}
	if sim || c.Flags().Lookup("provider") == nil {
		return out, nil // base URLs are for commands that call a provider
	}
	// Providers sharing a variable (OPENAI_BASE_URL) share the file's URL.
	fromFile := map[string]origin{} // URLEnv → value and PATH:LINE
	for _, spec := range providers.Specs {
		if u := uc.baseURLs[spec.Name]; u != "" && os.Getenv(spec.URLEnv) == "" {
			fromFile[spec.URLEnv] = origin{Value: u, Source: fmt.Sprintf("%s:%d", uc.path, uc.lines["base_urls."+spec.Name])}
		}
	}
	urlCommands := providerCommands(c.Root())
	for _, spec := range providers.Specs {
		o := origin{Key: "base_urls." + spec.Name, Source: "default", Commands: urlCommands}
		f, inFile := fromFile[spec.URLEnv]
		switch env := os.Getenv(spec.URLEnv); {
		case inFile:
			o.Value, o.Source = f.Value, f.Source
		case env != "":
			o.Value, o.Source = env, "env "+spec.URLEnv
		default:
			o.Value = spec.BaseURL
			switch {
			case o.Value == "" && spec.URLRequired:
				o.Value = "(none: set " + spec.URLEnv + ")"
			case o.Value == "":
				o.Value = "(the SDK's default)"
			}
		}
		out = append(out, o)
	}
	for env, f := range fromFile {
		os.Setenv(env, f.Value) // read by the provider when it is chosen
	}
	return out, nil
}

// hasSettingFlag reports whether c has the flag of any setting.
func hasSettingFlag(c *cobra.Command) bool {
	for _, s := range settings {
		if c.Flags().Lookup(s.flag) != nil {
			return true
		}
	}
	return false
}

// commandsWithFlag lists the runnable commands under root (paths without
// "strata ", 'config' left out; the bare command, which opens the chat or
// runs a prompt, is "strata") that have flag.
func commandsWithFlag(root *cobra.Command, flag string) []string {
	var out []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Name() != "config" && c.Flags().Lookup(flag) != nil {
			out = append(out, strings.TrimPrefix(c.CommandPath(), root.Name()+" "))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// providerCommands are the commands base_urls applies to: those with
// --provider that call a provider (not simCommands).
func providerCommands(root *cobra.Command) []string {
	var out []string
	for _, name := range commandsWithFlag(root, "provider") {
		if !slices.Contains(simCommands, root.Name()+" "+name) {
			out = append(out, name)
		}
	}
	return out
}

// simUnfit says why the setting key = value (from the environment or the
// file) cannot be used by the simulator command c, or "" when it can: a
// provider without a cache simulator, a model without a price, or a model
// of another provider family than the simulator's (Bedrock prices Claude
// models).
func simUnfit(c *cobra.Command, key, value string) string {
	switch key {
	case "provider":
		if _, err := simProvider(value); err != nil {
			return "it has no cache simulator (" + simProviderNames + ")"
		}
	case "model":
		price, ok := cachesim.Lookup(value)
		if !ok {
			return "it has no price in cachesim/prices.json"
		}
		p := c.Flags().Lookup("provider").Value.String()
		if p == "all" {
			return "--provider all prices each provider's own default model"
		}
		sp, err := simProvider(p)
		if err != nil {
			return "" // the command reports the bad --provider itself
		}
		if !servesModel(sp, price) {
			return fmt.Sprintf("it is a %s model and the simulator is %s", price.Provider, sp)
		}
	}
	return ""
}

// modelUnfit says why the model setting o (from the environment or the
// file) cannot go with the provider chosen before it in done, or "" when it
// can: the provider came from a stronger source (a flag over the
// environment or the file, the environment over the file) and the price
// table knows the model as another provider family's (Bedrock serves Claude
// models; OpenAI's two APIs serve the same models). A model the table does
// not know is kept: strata cannot tell (ollama, vllm, OpenRouter ids).
func modelUnfit(o origin, done []origin) string {
	var prov origin
	for _, d := range done {
		if d.Key == "provider" {
			prov = d
		}
	}
	if sourceRank(prov.Source) <= sourceRank(o.Source) {
		return ""
	}
	price, ok := cachesim.Lookup(o.Value)
	if !ok {
		return ""
	}
	family, err := simProvider(prov.Value)
	if err != nil || servesModel(family, price) {
		return ""
	}
	return fmt.Sprintf("it is a model of %s and the provider is %s (from %s)", price.Provider, prov.Value, prov.Source)
}

// servesModel reports whether the provider family sim (a cache simulator's
// name: simProvider) serves price's model: its own models, and Claude
// models on Bedrock.
func servesModel(sim string, price cachesim.Price) bool {
	return price.Provider == sim || (sim == "bedrock" && price.Provider == "anthropic")
}

// sourceRank orders origins by precedence: flag 3, env 2, file 1, default 0.
func sourceRank(src string) int {
	switch {
	case strings.HasPrefix(src, "flag "):
		return 3
	case strings.HasPrefix(src, "env "):
		return 2
	case src == "default" || src == "":
		return 0
	}
	return 1
}

// configFileHelp describes the config file for help texts.
func configFileHelp() string {
	return `Defaults for run, chat, acp, render, sessions resume/branch, bench cache and replay
(each where it has the setting's flag) can be kept in a YAML file: $STRATA_CONFIG,
else ` + filepath.Join("<user config dir>", "strata", "config.yaml") + ` (~/.config/strata/config.yaml on Linux,
~/Library/Application Support/strata/config.yaml on macOS), for example

  provider: anthropic        # or STRATA_PROVIDER
  model: claude-sonnet-4-5   # or STRATA_MODEL
  layout: ` + strata.DefaultLayout + `            # or STRATA_LAYOUT
  approve: allowlist         # or STRATA_APPROVE
  max_turns: 40
  stream_idle_timeout: 90s
  base_urls:
    anthropic: http://127.0.0.1:8080   # unless ANTHROPIC_BASE_URL is set

A flag beats its environment variable, which beats the file, which beats the
built-in default; base_urls likewise never overrides a *_BASE_URL variable
that is set. bench cache and replay take provider and model only when they can
price them (else a warning, and their default). Keys: ` + strings.Join(settingKeys(), ", ") + `, base_urls.`
}

// nearest returns the candidate within edit distance 2 of s (the closest,
// the first on ties), or "".
func nearest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
