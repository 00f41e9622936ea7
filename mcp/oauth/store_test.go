package oauth

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// Tokens are secrets: the directory is 0700 and each file 0600, and a
// record round-trips.
func TestStorePermissionsAndRoundTrip(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "mcp-oauth")}
	r := &Record{Server: "remote", URL: "https://mcp.example/mcp", ClientID: "c1", TokenURL: "https://as.example/token",
		Token: &oauth2.Token{AccessToken: "a1", RefreshToken: "r1", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour).Round(time.Second)}}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{s.Dir: 0o700, s.Path(r.URL): 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	got, err := s.Load(r.URL)
	if err != nil || got == nil || got.Token.RefreshToken != "r1" || got.ClientID != "c1" || !got.Token.Expiry.Equal(r.Token.Expiry) {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if other, err := s.Load("https://other.example/mcp"); other != nil || err != nil {
		t.Fatalf("another URL: %+v, %v", other, err)
	}
	if ok, err := s.Delete(r.URL); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if ok, err := s.Delete(r.URL); ok || err != nil {
		t.Fatalf("second Delete = %v, %v", ok, err)
	}
}

// A damaged token file is an error naming the file and what to do.
func TestStoreDamagedFile(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	url := "https://mcp.example/mcp"
	if err := os.WriteFile(s.Path(url), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Load(url)
	if err == nil || !strings.Contains(err.Error(), s.Path(url)) || !strings.Contains(err.Error(), "strata mcp logout") {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewHandler(Config{Server: "x", URL: url, Store: s}).TokenSource(context.Background()); err == nil {
		t.Fatal("TokenSource hid the damaged file")
	}
}

// An expired stored token is refreshed at a real token endpoint
// (127.0.0.1) with the stored client, and the new token is stored.
func TestHandlerRefreshesAndStores(t *testing.T) {
	var form string
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		form = string(b)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "a2", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "r2"})
	}))
	defer as.Close()
	s := Store{Dir: t.TempDir()}
	url := "http://127.0.0.1:1/mcp"
	if err := s.Save(&Record{Server: "remote", URL: url, ClientID: "c1", TokenURL: as.URL + "/token", AuthStyle: oauth2.AuthStyleInParams,
		Token: &oauth2.Token{AccessToken: "a1", RefreshToken: "r1", Expiry: time.Now().Add(-time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	ts, err := NewHandler(Config{Server: "remote", URL: url, Store: s}).TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("TokenSource = %v, %v", ts, err)
	}
	tok, err := ts.Token()
	if err != nil || tok.AccessToken != "a2" {
		t.Fatalf("Token = %+v, %v", tok, err)
	}
	if !strings.Contains(form, "grant_type=refresh_token") || !strings.Contains(form, "refresh_token=r1") || !strings.Contains(form, "client_id=c1") {
		t.Fatalf("token request %q", form)
	}
	r, err := s.Load(url)
	if err != nil || r.Token.AccessToken != "a2" || r.Token.RefreshToken != "r2" {
		t.Fatalf("stored %+v, %v", r, err)
	}
}

// No stored token: no Authorization header until a 401.
func TestHandlerNoToken(t *testing.T) {
	ts, err := NewHandler(Config{Server: "remote", URL: "http://127.0.0.1:1/mcp", Store: Store{Dir: t.TempDir()}}).TokenSource(context.Background())
	if ts != nil || err != nil {
		t.Fatalf("TokenSource = %v, %v", ts, err)
	}
}

// With the browser off, a 401 or a 403 insufficient_scope fails naming
// `strata mcp auth`; a plain 403 is the server's answer and is left to the
// transport, as the go-sdk's flow does.
func TestHandlerOffChallenges(t *testing.T) {
	h := NewHandler(Config{Server: "remote", URL: "http://127.0.0.1:1/mcp", Browser: Off})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1/mcp", nil)
	for _, c := range []struct {
		status  int
		www     string
		wantErr bool
	}{
		{401, `Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource"`, true},
		{403, `Bearer error="insufficient_scope", scope="more"`, true},
		{403, "", false},
	} {
		resp := &http.Response{StatusCode: c.status, Header: http.Header{"Www-Authenticate": {c.www}}, Body: io.NopCloser(strings.NewReader(""))}
		err := h.Authorize(context.Background(), req, resp)
		if (err != nil) != c.wantErr || err != nil && !strings.Contains(err.Error(), "strata mcp auth remote") {
			t.Errorf("%d %q: err = %v", c.status, c.www, err)
		}
	}
}

// Scope selection (MCP authorization, "Scope Selection Strategy"): the
// server's scopes, else the config's oauthScopes, else none; a stored
// token's scopes are kept by a step-up.
func TestHandlerScopes(t *testing.T) {
	h := &Handler{cfg: Config{Scopes: []string{"openid"}}}
	for _, c := range []struct {
		granted, found, want []string
	}{
		{nil, []string{"files:read"}, []string{"files:read"}},
		{nil, nil, []string{"openid"}},
		{[]string{"files:read"}, []string{"files:write"}, []string{"files:write", "files:read"}},
	} {
		h.granted = c.granted
		if got := h.scopes(c.found); !slices.Equal(got, c.want) {
			t.Errorf("granted %q, found %q: %q, want %q", c.granted, c.found, got, c.want)
		}
	}
	if got := (&Handler{granted: []string{"a"}}).scopes(nil); len(got) != 0 {
		t.Errorf("no scopes named or configured: %q, want none (the scope parameter left out)", got)
	}
}
