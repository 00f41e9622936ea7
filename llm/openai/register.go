package openai

import "github.com/strata-agent/strata/llm"

func init() {
	cfg := func(c llm.ClientConfig) Config {
		return Config{Name: c.Name, APIKey: c.APIKey, BaseURL: c.BaseURL, HTTPClient: c.HTTPClient, MaxRetries: c.MaxRetries, Limits: c.Limits}
	}
	llm.RegisterClient(llm.APIOpenAIChat, func(c llm.ClientConfig) (llm.Provider, error) { return NewChat(cfg(c)), nil })
	llm.RegisterClient(llm.APIOpenAIResponses, func(c llm.ClientConfig) (llm.Provider, error) { return NewResponses(cfg(c)), nil })
}
