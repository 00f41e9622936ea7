// Package mcptest has MCP servers on 127.0.0.1 (the go-sdk's, over
// streamable HTTP) for the tests of strata's MCP client: one behind its own
// OAuth authorization server (New) and one that asks the person for input
// (Asker).
package mcptest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is an MCP server on 127.0.0.1 behind its own authorization
// server (RFC 9728 metadata, RFC 8414 metadata, dynamic registration, a
// consent-free authorization endpoint that checks PKCE at the token
// endpoint), for tests of MCP authorization (docs/mcp-auth.md). Its tool
// "whoami" answers "authorized"; the bearer token it accepts is "tok-1",
// the client it registers "dyn-1".
type Server struct {
	// URL is the MCP endpoint.
	URL            string
	mu             sync.Mutex
	authorizations int
	challenge      string
}

// Authorizations counts the visits of the authorization endpoint.
func (p *Server) Authorizations() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.authorizations
}

// New starts a Server, closed when t ends.
func New(t testing.TB) *Server {
	p := &Server{}
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
	p.URL = base + "/mcp"
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
		js(w, 200, map[string]any{"resource": p.URL, "authorization_servers": []string{base}})
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
		if q.Get("client_id") != "dyn-1" || q.Get("code_challenge_method") != "S256" || q.Get("resource") != p.URL {
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

// Asker starts a server whose tool "ask" sends schema as an
// elicitation/create request with the message "Your details?" and returns
// the answer (action and content) as JSON text; it returns the endpoint
// URL, closed when t ends.
func Asker(t testing.TB, schema json.RawMessage) string {
	s := sdk.NewServer(&sdk.Implementation{Name: "ask", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your details?", RequestedSchema: schema})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
			}
			b, _ := json.Marshal(r)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}
