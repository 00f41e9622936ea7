package providers

import (
	"errors"
	"fmt"

	"github.com/strata-agent/strata/internal/capture"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// ErrNoProvider is returned by Choose when no provider was named and no API
// key variable is set.
var ErrNoProvider = errors.New("no provider: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or name a provider")

// Want is what a program asks for: the fields of strata.Options that choose
// the provider and model.
type Want struct {
	// Provider, when set, is used as is (Name, APIKey, BaseURL, Replay and
	// Respond are ignored; a model is then required).
	Provider llm.Provider
	// Name selects a provider by name (Names; "openai" = openai-chat); ""
	// = the first of ANTHROPIC_API_KEY, OPENAI_API_KEY that is set.
	Name string
	// Model is the model asked for; AgentModel the agent file's (used when
	// Model is ""); else the provider's default.
	Model, AgentModel string
	// APIKey and BaseURL override the provider's variables.
	APIKey, BaseURL string
	// Replay or Respond, when set, are served on 127.0.0.1 to the provider's
	// real SDK (llm/replay); Name must name their wire format.
	Replay  []replay.Response
	Respond func(replay.Request) replay.Response
	// Limits bound every model call (llm.Limits).
	Limits llm.Limits
	// Warn receives a warning about a model id the provider probably does
	// not serve (nil = none).
	Warn func(string)
}

// Choice is the provider a workspace talks to — a Spec chosen by name, or an
// llm.Provider given as is — and the model id sent to it. Close it when the
// workspace closes (it may hold the replay server).
type Choice struct {
	Name  string // the provider's name (Spec.Name or llm.Provider.Name)
	Model string // the model id sent (a kiro name mapped: ModelFor)

	spec  Spec // zero when given as an llm.Provider
	given llm.Provider
	opts  Options
	srv   *replay.Server // the server of Want.Replay or Want.Respond
}

// Choose resolves w's provider and model. The client itself is built per
// session (Client), so a missing key fails there, not in a render. Every
// error is one of w's (an unknown name, Replay without a Name, no model, no
// API key variable: ErrNoProvider) or a replay server that cannot start.
func Choose(w Want) (*Choice, error) {
	model := w.Model
	if model == "" {
		model = w.AgentModel
	}
	if w.Provider != nil {
		if model == "" {
			return nil, fmt.Errorf("Options.Model is required with Options.Provider (%s)", w.Provider.Name())
		}
		return &Choice{Name: w.Provider.Name(), given: w.Provider, Model: model}, nil
	}
	var spec Spec
	switch {
	case w.Name != "":
		s, err := Lookup(Canonical(w.Name))
		if err != nil {
			return nil, fmt.Errorf("provider: %w; openai is accepted for openai-chat", err)
		}
		spec = s
	case len(w.Replay) > 0 || w.Respond != nil:
		return nil, errors.New("Options.Replay and Options.Respond need Options.ProviderName: the wire format of the responses")
	default:
		s, ok := FromEnv()
		if !ok {
			return nil, ErrNoProvider
		}
		spec = s
	}
	c := &Choice{Name: spec.Name, spec: spec, opts: Options{APIKey: w.APIKey, BaseURL: w.BaseURL, MaxRetries: 2, Limits: w.Limits}}
	if len(w.Replay) > 0 || w.Respond != nil {
		srv, err := replay.NewServer(w.Replay...)
		if len(w.Replay) == 0 {
			srv, err = replay.NewResponder(w.Respond)
		}
		if err != nil {
			return nil, err
		}
		c.srv = srv
		c.opts = Options{APIKey: "replay", BaseURL: srv.URL(), Limits: w.Limits}
		if model == "" {
			model = "replay"
		}
	}
	if model == "" {
		model = spec.Model
	}
	if model == "" {
		return nil, fmt.Errorf("provider %s has no default model: name the model the server serves (--model ID, STRATA_MODEL or the config file's model; Options.Model in Go)", spec.Name)
	}
	// A replay or a base URL of the program's own names its models as it
	// likes: no warning about unknown ids then.
	check := c.srv == nil && w.BaseURL == ""
	c.Model = modelID(spec.Name, model, check, w.Warn)
	return c, nil
}

// Client returns the provider sessions send through: the given one, or a
// new client of the chosen Spec (New's errors: a missing key).
func (c *Choice) Client() (llm.Provider, error) {
	if c.given != nil {
		return c.given, nil
	}
	return New(c.spec, c.opts)
}

// Capturing returns a provider of the same wire API whose SDK sends
// nothing: its transport records the request (method, URL, body) and fails
// it. The second result returns what was recorded. A provider given as an
// llm.Provider cannot be captured (an error says so).
func (c *Choice) Capturing() (llm.Provider, func() (capture.Request, bool), error) {
	if c.given != nil {
		return nil, nil, fmt.Errorf("render: the workspace's provider was given as an llm.Provider (%s); "+
			"rendering the wire body needs a provider chosen by name", c.Name)
	}
	tr := &capture.Transport{}
	p, err := New(c.spec, Options{APIKey: "render-not-sent", BaseURL: "http://127.0.0.1:1", HTTPClient: tr.Client()})
	if err != nil {
		return nil, nil, err
	}
	return p, func() (capture.Request, bool) {
		reqs := tr.Requests()
		if len(reqs) == 0 {
			return capture.Request{}, false
		}
		return reqs[len(reqs)-1], true
	}, nil
}

// ReplayURL returns the base URL of the loopback server playing
// Want.Replay or Want.Respond ("" when there is none).
func (c *Choice) ReplayURL() string {
	if c.srv == nil {
		return ""
	}
	return c.srv.URL()
}

// Close stops the replay server, if any.
func (c *Choice) Close() {
	if c != nil && c.srv != nil {
		c.srv.Close()
	}
}

// aliases maps other provider names Want.Name accepts to the provider they
// select: "openai" (the name `strata bench` and `strata replay` give the
// OpenAI price and cache-simulator family) is the OpenAI Chat Completions
// API.
var aliases = map[string]string{"openai": "openai-chat"}

// Canonical returns the provider name aliases maps name to, else name
// itself.
func Canonical(name string) string {
	if c, ok := aliases[name]; ok {
		return c
	}
	return name
}

// Borrow returns a copy of c for a workspace that shares c's provider and
// replay server without owning them (a sub-agent's): its Close does
// nothing.
func (c *Choice) Borrow() *Choice {
	b := *c
	b.srv = nil
	return &b
}

// SetAgentModel sends model, an agent file's "model" (a kiro name is mapped
// for the provider: ModelFor), from now on: kiro runs each agent on its own
// model.
func (c *Choice) SetAgentModel(model string) { c.Model = modelID(c.Name, model, false, nil) }
