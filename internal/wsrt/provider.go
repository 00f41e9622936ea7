package wsrt

import (
	"errors"

	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/llm"
)

// chooseProvider is providers.Choose with o's fields (agentModel is the
// agent file's model, "" when none); errors are *ConfigError.
func chooseProvider(o Options, agentModel string) (*providers.Choice, error) {
	c, err := providers.Choose(providers.Want{Provider: o.Provider, Name: o.ProviderName, Model: o.Model, AgentModel: agentModel,
		APIKey: o.APIKey, BaseURL: o.BaseURL, Replay: o.Replay, Respond: o.Respond, Limits: o.Limits, Warn: o.Warn})
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return c, nil
}

// client returns the provider a session sends through; a missing key (or,
// on Bedrock, missing AWS credentials: llm.ErrNoCredentials) is a
// *ConfigError.
func (w *Workspace) client() (llm.Provider, error) {
	p, err := w.prov.Client()
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return p, nil
}

// errCaptured stops a render's loop once the request was captured.
var errCaptured = errors.New("render: request captured")
