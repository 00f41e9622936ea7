package oauth

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Browser says how the authorization URL reaches the person.
type Browser string

// Browser modes (docs/mcp-auth.md, "The browser step").
const (
	// Open opens the system browser (xdg-open, open, rundll32) and prints
	// the URL too, for when no browser opens.
	Open Browser = "open"
	// Print only prints the URL.
	Print Browser = "print"
	// Headless GETs the URL itself and follows the authorization server's
	// redirects to the loopback listener, with no person: for authorization
	// servers that grant without a login page (tests, the conformance suite).
	Headless Browser = "headless"
	// Off refuses to authorize (no person can answer, e.g. `strata run`
	// without a terminal); the error says to run `strata mcp auth SERVER`.
	Off Browser = "off"
)

// ParseBrowser checks a Browser name ("" = Open).
func ParseBrowser(s string) (Browser, error) {
	switch b := Browser(s); b {
	case "":
		return Open, nil
	case Open, Print, Headless, Off:
		return b, nil
	}
	return "", fmt.Errorf("MCP OAuth browser mode %q is not one of open, print, headless, off", s)
}

// Config configures the authorization of one MCP server.
type Config struct {
	// Server is the server's name (for messages and the token record).
	Server string
	// URL is the MCP endpoint.
	URL string
	// Store keeps the token; a zero Store keeps nothing across processes.
	Store Store
	// Browser is how the authorization URL reaches the person ("" = Open).
	Browser Browser
	// Out receives the authorization URL and progress lines (nil = discarded).
	Out io.Writer
	// RedirectAddr is the loopback listener's host:port (kiro's
	// oauth.redirectUri, e.g. "127.0.0.1:7778"); "" = 127.0.0.1 and a free
	// port. The redirect URI is http://ADDR/callback.
	RedirectAddr string
	// Scopes (kiro's oauthScopes) are requested when the server names none
	// (in WWW-Authenticate or its protected-resource metadata's
	// scopes_supported); scopes the server names take precedence, as the
	// MCP authorization spec's scope selection says.
	Scopes []string
	// ClientID and ClientSecret are a pre-registered client (kiro oauth
	// object's clientId / clientSecret); "" = none.
	ClientID, ClientSecret string
	// ClientMetadataURL is strata's client ID metadata document URL (an
	// https URL with a path), used when the authorization server supports
	// client ID metadata documents; "" = not used.
	ClientMetadataURL string
	// HTTPClient makes the metadata, registration and token requests (nil =
	// http.DefaultClient).
	HTTPClient *http.Client
}

// Handler is an auth.OAuthHandler for one server: it offers the stored
// token (refreshed when expired) and, when the server answers 401 (or 403
// insufficient_scope), runs the go-sdk's authorization code flow and stores
// the new token. Safe for concurrent use.
type Handler struct {
	cfg Config

	mu      sync.Mutex
	stored  oauth2.TokenSource // from the store, before any flow
	granted []string           // the stored token's scopes, kept by a step-up (SEP-2350)
	inner   *auth.AuthorizationCodeHandler
	port    string // the loopback port, kept for later flows (step-up)
	loadErr error
}

var _ auth.OAuthHandler = (*Handler)(nil)

// NewHandler returns a Handler; a stored token for cfg.URL is used at once.
// A token file that cannot be read is reported by TokenSource.
func NewHandler(cfg Config) *Handler {
	h := &Handler{cfg: cfg}
	if cfg.Store.Dir == "" {
		return h
	}
	r, err := cfg.Store.Load(cfg.URL)
	if err != nil {
		h.loadErr = err
	} else if r != nil {
		h.stored, h.granted = h.saving(r.config(), r.Token), r.Scopes
	}
	return h
}

// TokenSource returns the source of the bearer token sent to the server:
// the last flow's, else the stored one, else nil (no Authorization header).
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	inner, stored, err := h.inner, h.stored, h.loadErr
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if inner != nil {
		return inner.TokenSource(ctx)
	}
	return stored, nil
}

// Authorize runs the authorization flow for a 401 or 403 response (the
// go-sdk decides what the challenge asks for; the transport retries the
// request once after it).
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.cfg.Browser == Off {
		resp.Body.Close()
		if resp.StatusCode == http.StatusForbidden && !strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope") {
			return nil // a plain 403 is the server's answer, not a request to authorize (as the go-sdk's flow)
		}
		return fmt.Errorf("MCP server %q requires authorization and no one can answer a browser login here; run 'strata mcp auth %s' first", h.cfg.Server, h.cfg.Server)
	}
	inner, err := h.handler()
	if err != nil {
		return err
	}
	if err := inner.Authorize(ctx, req, resp); err != nil {
		return fmt.Errorf("MCP server %q: authorization failed: %w", h.cfg.Server, err)
	}
	return nil
}

// handler returns the go-sdk flow, made on first use with the loopback
// redirect URI.
func (h *Handler) handler() (*auth.AuthorizationCodeHandler, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inner != nil {
		return h.inner, nil
	}
	addr := h.cfg.RedirectAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("MCP server %q: OAuth redirect listener on %s: %w (change oauth.redirectUri)", h.cfg.Server, addr, err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	h.port = net.JoinHostPort(host, port)
	redirect := "http://" + h.port + "/callback"
	c := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: h.fetch,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{redirect},
				ClientName:    "strata",
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		},
		ScopeFilter:         h.scopes,
		RequestRefreshToken: true,
		Client:              h.cfg.HTTPClient,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			r := recordOf(h.cfg, c, t)
			if h.cfg.Store.Dir != "" {
				if err := h.cfg.Store.Save(r); err != nil {
					return nil, fmt.Errorf("store the token: %w", err)
				}
			}
			return h.saving(c, t), nil
		},
	}
	if h.cfg.ClientMetadataURL != "" {
		c.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientMetadataURL}
	}
	if h.cfg.ClientID != "" {
		c.PreregisteredClient = &oauthex.ClientCredentials{ClientID: h.cfg.ClientID}
		if h.cfg.ClientSecret != "" {
			c.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.cfg.ClientSecret}
		}
	}
	inner, err := auth.NewAuthorizationCodeHandler(c)
	if err != nil {
		return nil, fmt.Errorf("MCP server %q: OAuth configuration: %w", h.cfg.Server, err)
	}
	h.inner = inner
	return inner, nil
}

// scopes chooses the scopes to ask for from those the server named
// (WWW-Authenticate, else its metadata's scopes_supported): those, else the
// config's (kiro's oauthScopes), else none; with the stored token's scopes
// added to a non-empty choice, so that a step-up over a stored token keeps
// them (SEP-2350; the go-sdk does the same for scopes granted within one
// process).
func (h *Handler) scopes(found []string) []string {
	found = slices.Clone(found)
	if len(found) == 0 {
		found = slices.Clone(h.cfg.Scopes)
	}
	for _, g := range h.granted {
		if len(found) > 0 && !slices.Contains(found, g) {
			found = append(found, g)
		}
	}
	return found
}

func recordOf(cfg Config, c *oauth2.Config, t *oauth2.Token) *Record {
	return &Record{
		Server: cfg.Server, URL: cfg.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, AuthStyle: c.Endpoint.AuthStyle,
		Scopes: c.Scopes, Token: t,
	}
}

// saving is c's refreshing token source starting at t, storing each new
// token (a refresh) in the Store.
func (h *Handler) saving(c *oauth2.Config, t *oauth2.Token) oauth2.TokenSource {
	ctx := context.Background()
	if h.cfg.HTTPClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, h.cfg.HTTPClient)
	}
	return &savingSource{h: h, c: c, src: c.TokenSource(ctx, t), last: t.AccessToken}
}

type savingSource struct {
	h    *Handler
	c    *oauth2.Config
	src  oauth2.TokenSource
	mu   sync.Mutex
	last string
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.src.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.AccessToken != s.last && s.h.cfg.Store.Dir != "" {
		if err := s.h.cfg.Store.Save(recordOf(s.h.cfg, s.c, t)); err != nil {
			return nil, fmt.Errorf("MCP server %q: store the refreshed token: %w", s.h.cfg.Server, err)
		}
	}
	s.last = t.AccessToken
	return t, nil
}

// fetch is the go-sdk's AuthorizationCodeFetcher: it serves the loopback
// redirect URI, sends the person (or, Headless, itself) to args.URL and
// returns the code, state and iss the authorization server redirects with.
func (h *Handler) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	h.mu.Lock()
	addr := h.port
	h.mu.Unlock()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("OAuth redirect listener on %s: %w", addr, err)
	}
	got := make(chan url.Values, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		msg := "strata is authorized for MCP server " + h.cfg.Server + ". You can close this tab."
		if e := q.Get("error"); e != "" {
			msg = "Authorization failed: " + e + " " + q.Get("error_description")
		}
		fmt.Fprintf(w, "<!doctype html><title>strata</title><p>%s</p>\n", html.EscapeString(msg))
		select {
		case got <- q:
		default:
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()

	out := h.cfg.Out
	if out == nil {
		out = io.Discard
	}
	errc := make(chan error, 1)
	switch h.cfg.Browser {
	case Headless:
		go func() { errc <- follow(ctx, h.cfg.HTTPClient, args.URL) }()
	case Print:
		fmt.Fprintf(out, "strata: MCP server %q needs authorization; open this URL in a browser:\n  %s\n", h.cfg.Server, args.URL)
	default:
		fmt.Fprintf(out, "strata: MCP server %q needs authorization; opening your browser (else open this URL):\n  %s\n", h.cfg.Server, args.URL)
		if err := openBrowser(args.URL); err != nil {
			fmt.Fprintf(out, "strata: could not open a browser: %v\n", err)
		}
	}
	for {
		select {
		case q := <-got:
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		case err := <-errc:
			if err != nil {
				return nil, err
			}
			errc = nil // the redirect was followed; its query is on got
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the browser to return to %s: %w", "http://"+addr+"/callback", ctx.Err())
		}
	}
}

// follow GETs u and follows its redirects (to the loopback listener).
func follow(ctx context.Context, c *http.Client, u string) error {
	if c == nil {
		c = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("headless authorization: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if !strings.HasSuffix(resp.Request.URL.Path, "/callback") {
		return fmt.Errorf("headless authorization: %s ended at %s (status %d), not at the redirect URI; authorize in a browser instead", u, resp.Request.URL.Redacted(), resp.StatusCode)
	}
	return nil
}

// openBrowser opens u in the system browser.
func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
