package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/mcptest"
	"github.com/strata-agent/strata/mcp/oauth"
)

// A server that answers 401 is authorized (headless browser step: strata
// follows the authorization endpoint's redirect to its own loopback
// listener), the tool call works, and the token is stored: the next
// Manager uses it without authorizing again.
func TestOAuthFlowStoresToken(t *testing.T) {
	ctx := context.Background()
	p := mcptest.New(t)
	store := oauth.Store{Dir: t.TempDir()}
	for i := range 2 {
		m := NewManager(Options{OAuth: OAuthOptions{Store: store, Browser: oauth.Headless}})
		if err := m.LaunchServer(ctx, "p", ServerConfig{URL: p.URL}); err != nil {
			t.Fatalf("launch %d: %v", i, err)
		}
		r, err := m.ExecuteTool(ctx, "p", "whoami", nil, nil)
		m.Terminate()
		if err != nil || r.Content[0].Text != "authorized" {
			t.Fatalf("call %d: %+v, %v", i, r, err)
		}
	}
	if p.Authorizations() != 1 {
		t.Fatalf("%d authorizations, want 1 (the second launch should use the stored token)", p.Authorizations())
	}
	if rec, err := store.Load(p.URL); err != nil || rec == nil || rec.Token.AccessToken != "tok-1" || rec.ClientID != "dyn-1" {
		t.Fatalf("stored %+v, %v", rec, err)
	}
}

// Where no one can log in (Browser Off) the launch fails saying how to
// authorize, and nothing is visited.
func TestOAuthOffNamesCommand(t *testing.T) {
	p := mcptest.New(t)
	m := NewManager(Options{OAuth: OAuthOptions{Store: oauth.Store{Dir: t.TempDir()}, Browser: oauth.Off}})
	defer m.Terminate()
	err := m.LaunchServer(context.Background(), "p", ServerConfig{URL: p.URL})
	if err == nil || !strings.Contains(err.Error(), "strata mcp auth p") {
		t.Fatalf("err = %v", err)
	}
	if p.Authorizations() != 0 {
		t.Fatal("authorization endpoint visited with the browser off")
	}
}

// A config that sets Authorization itself gets no OAuth: the 401 is the
// launch error.
func TestOAuthNotWithOwnAuthorization(t *testing.T) {
	p := mcptest.New(t)
	m := NewManager(Options{OAuth: OAuthOptions{Browser: oauth.Headless}})
	defer m.Terminate()
	err := m.LaunchServer(context.Background(), "p", ServerConfig{URL: p.URL, Headers: map[string]string{"authorization": "Bearer wrong"}})
	if err == nil || p.Authorizations() != 0 {
		t.Fatalf("err = %v, %d authorizations", err, p.Authorizations())
	}
}
