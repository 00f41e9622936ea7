package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/strata-agent/strata/mcp/oauth"
)

// protected is an MCP server on 127.0.0.1 behind its own authorization
// server (RFC 9728 metadata, RFC 8414 metadata, dynamic registration, a
// consent-free authorization endpoint that checks PKCE at the token
// endpoint). authorizations counts /authorize visits.
type protected struct {
	url            string
	mu             sync.Mutex
	authorizations int
	challenge      string
}

func newProtected(t *testing.T) *protected {
	p := &protected{}
	s := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "authorized"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base := srv.URL
	p.url = base + "/mcp"
	js := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-1" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, map[string]any{"resource": p.url, "authorization_servers": []string{base}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		m["client_id"] = "dyn-1"
		js(w, 201, m)
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		p.mu.Lock()
		p.authorizations++
		p.challenge = q.Get("code_challenge")
		p.mu.Unlock()
		if q.Get("client_id") != "dyn-1" || q.Get("code_challenge_method") != "S256" || q.Get("resource") != p.url {
			http.Error(w, "bad authorization request "+r.URL.RawQuery, 400)
			return
		}
		u, _ := url.Parse(q.Get("redirect_uri"))
		u.RawQuery = url.Values{"code": {"code-1"}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		p.mu.Lock()
		ok := base64.RawURLEncoding.EncodeToString(sum[:]) == p.challenge
		p.mu.Unlock()
		if r.Form.Get("code") != "code-1" || !ok {
			js(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		js(w, 200, map[string]any{"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600})
	})
	return p
}

// A server that answers 401 is authorized (headless browser step: strata
// follows the authorization endpoint's redirect to its own loopback
// listener), the tool call works, and the token is stored: the next
// Manager uses it without authorizing again.
func TestOAuthFlowStoresToken(t *testing.T) {
	ctx := context.Background()
	p := newProtected(t)
	store := oauth.Store{Dir: t.TempDir()}
	for i := range 2 {
		m := NewManager(Options{OAuth: OAuthOptions{Store: store, Browser: oauth.Headless}})
		if err := m.LaunchServer(ctx, "p", ServerConfig{URL: p.url}); err != nil {
			t.Fatalf("launch %d: %v", i, err)
		}
		r, err := m.ExecuteTool(ctx, "p", "whoami", nil, nil)
		m.Terminate()
		if err != nil || r.Content[0].Text != "authorized" {
			t.Fatalf("call %d: %+v, %v", i, r, err)
		}
	}
	if p.authorizations != 1 {
		t.Fatalf("%d authorizations, want 1 (the second launch should use the stored token)", p.authorizations)
	}
	if rec, err := store.Load(p.url); err != nil || rec == nil || rec.Token.AccessToken != "tok-1" || rec.ClientID != "dyn-1" {
		t.Fatalf("stored %+v, %v", rec, err)
	}
}

// Where no one can log in (Browser Off) the launch fails saying how to
// authorize, and nothing is visited.
func TestOAuthOffNamesCommand(t *testing.T) {
	p := newProtected(t)
	m := NewManager(Options{OAuth: OAuthOptions{Store: oauth.Store{Dir: t.TempDir()}, Browser: oauth.Off}})
	defer m.Terminate()
	err := m.LaunchServer(context.Background(), "p", ServerConfig{URL: p.url})
	if err == nil || !strings.Contains(err.Error(), "strata mcp auth p") {
		t.Fatalf("err = %v", err)
	}
	if p.authorizations != 0 {
		t.Fatal("authorization endpoint visited with the browser off")
	}
}

// A config that sets Authorization itself gets no OAuth: the 401 is the
// launch error.
func TestOAuthNotWithOwnAuthorization(t *testing.T) {
	p := newProtected(t)
	m := NewManager(Options{OAuth: OAuthOptions{Browser: oauth.Headless}})
	defer m.Terminate()
	err := m.LaunchServer(context.Background(), "p", ServerConfig{URL: p.url, Headers: map[string]string{"authorization": "Bearer wrong"}})
	if err == nil || p.authorizations != 0 {
		t.Fatalf("err = %v, %d authorizations", err, p.authorizations)
	}
}
