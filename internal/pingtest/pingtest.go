// Package pingtest reads keep-alive pings (docs/keepalive.md) off the
// Anthropic wire for the tests of the in-process and durable pingers: a
// ping is the last request's body with max_tokens 1.
package pingtest

import (
	"encoding/json"
	"testing"
)

// IsPing reports whether an Anthropic request body asks for one token;
// a body that is not JSON fails the test.
func IsPing(t testing.TB, body string) bool {
	t.Helper()
	var v struct {
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Errorf("request body is not JSON: %v", err)
	}
	return v.MaxTokens == 1
}

// WithoutMaxTokens returns body's JSON object without max_tokens, to
// compare a ping with the request it repeats.
func WithoutMaxTokens(t testing.TB, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "max_tokens")
	return m
}
