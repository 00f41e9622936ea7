package strata

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"

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
	srv   *replay.Server // Options.Replay's server
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
	case len(o.Replay) > 0:
		return providerChoice{}, configErrorf("Options.Replay needs Options.ProviderName: the wire format of the responses")
	default:
		s, ok := providers.FromEnv()
		if !ok {
			return providerChoice{}, &ConfigError{Err: ErrNoProvider}
		}
		spec = s
	}
	pc := providerChoice{name: spec.Name, spec: spec, opts: providers.Options{APIKey: o.APIKey, BaseURL: o.BaseURL, MaxRetries: 2, Limits: o.Limits}}
	if len(o.Replay) > 0 {
		srv, err := replay.NewServer(o.Replay...)
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
		return providerChoice{}, configErrorf("provider %s has no default model: set the model", spec.Name)
	}
	pc.model = model
	return pc, nil
}

// client returns the provider sessions send through.
func (p providerChoice) client() (llm.Provider, error) {
	if p.given != nil {
		return p.given, nil
	}
	if p.spec.Name == "bedrock" && p.opts.APIKey == "" {
		if err := checkAWSCredentials(); err != nil {
			return nil, &ConfigError{Err: err}
		}
	}
	c, err := providers.New(p.spec, p.opts)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return c, nil
}

// ErrNoAWSCredentials is returned (inside a *ConfigError) when the Bedrock
// provider is chosen and the AWS SDK's default credential chain finds no
// credentials; its message names what to set.
var ErrNoAWSCredentials = errors.New("bedrock: no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY " +
	"(and AWS_SESSION_TOKEN for temporary keys), or AWS_PROFILE naming a profile in ~/.aws/credentials or ~/.aws/config " +
	"(run 'aws configure' or 'aws sso login'); set AWS_REGION to the Bedrock region (default us-east-1)")

// awsCredentialWait bounds the credential check: the instance-metadata
// source (the chain's last) answers within it on EC2, and elsewhere fails
// fast or times out.
const awsCredentialWait = 3 * time.Second

// checkAWSCredentials asks the AWS SDK's default credential chain (env,
// shared files, SSO, web identity, container, EC2 instance metadata; AWS
// SDK for Go v2 "Specifying Credentials") for credentials before the
// Bedrock client is built, with the SDK's logger silenced so none of its
// WARN lines reach stderr. It returns an error wrapping ErrNoAWSCredentials
// (and the chain's error) when none are found within awsCredentialWait.
func checkAWSCredentials() error {
	ctx, cancel := context.WithTimeout(context.Background(), awsCredentialWait)
	defer cancel()
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region), config.WithLogger(logging.Nop{}), config.WithClientLogMode(0))
	if err != nil {
		return fmt.Errorf("%w (loading the AWS configuration: %v)", ErrNoAWSCredentials, err)
	}
	if cfg.Credentials == nil {
		return ErrNoAWSCredentials
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return fmt.Errorf("%w (credential chain: %v)", ErrNoAWSCredentials, err)
	}
	return nil
}

// ReplayURL returns the base URL of the loopback server playing
// Options.Replay ("" when there is none).
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
