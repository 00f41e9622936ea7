package gemini

import "github.com/strata-agent/strata/llm"

func init() {
	llm.RegisterClient(llm.APIGemini, func(c llm.ClientConfig) (llm.Provider, error) {
		return New(Config{APIKey: c.APIKey, BaseURL: c.BaseURL, HTTPClient: c.HTTPClient, MaxRetries: c.MaxRetries, Limits: c.Limits})
	})
}
