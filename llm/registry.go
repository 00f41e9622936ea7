package llm

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// Provider clients register themselves by wire API, as database/sql
// drivers do: importing a provider package (llm/anthropic, llm/openai,
// llm/bedrock, llm/gemini, or llm/all for every one) makes NewClient able
// to build its client, and a program that brings its own Provider links
// none of the provider SDKs.

// ClientConfig is what NewClient hands a registered client constructor.
type ClientConfig struct {
	// Name is the provider name the client reports (Provider.Name), e.g.
	// "deepseek" for an OpenAI-compatible server; "" = the API's own.
	Name string
	// APIKey is the key sent with each request; BaseURL overrides the
	// endpoint ("" = the SDK's default).
	APIKey, BaseURL string
	// HTTPClient carries the requests (nil = the SDK's default transport).
	HTTPClient *http.Client
	// MaxRetries is how many times a request is sent again before any byte
	// is streamed (Limits gives the policy); 0 = none.
	MaxRetries int
	// Limits bound the idle wait, the honoured retry delay and the call.
	Limits Limits
}

// ClientFunc builds a provider client from c.
type ClientFunc func(c ClientConfig) (Provider, error)

var (
	clientsMu sync.RWMutex
	clients   = map[API]ClientFunc{}
)

// ErrNotLinked is returned (wrapped) by NewClient for a wire API whose
// provider package the program does not import.
var ErrNotLinked = errors.New("no client for this wire API is linked into the program")

// ErrNoCredentials is wrapped by a client constructor that found no
// credentials to sign with (Bedrock's AWS credential chain); the error's
// text names what to set.
var ErrNoCredentials = errors.New("no credentials found")

// RegisterClient makes f the constructor of api's clients; the provider
// packages call it from init. A later registration for the same API
// replaces the earlier one.
func RegisterClient(api API, f ClientFunc) {
	clientsMu.Lock()
	clients[api] = f
	clientsMu.Unlock()
}

// NewClient builds a client of api with c. It fails with an error wrapping
// ErrNotLinked, naming the package to import, when no provider package for
// api is linked, and with the constructor's error otherwise.
func NewClient(api API, c ClientConfig) (Provider, error) {
	clientsMu.RLock()
	f := clients[api]
	clientsMu.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%s API: %w: import _ \"github.com/strata-agent/strata/llm/all\" (every provider) or the provider's own package", api, ErrNotLinked)
	}
	return f(c)
}
