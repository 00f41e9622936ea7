// Package oauth is strata's MCP authorization client (docs/mcp-auth.md): an
// auth.OAuthHandler for the go-sdk's streamable HTTP transport that runs
// the go-sdk's authorization code flow (protected-resource metadata from
// WWW-Authenticate, authorization-server metadata discovery, client ID
// metadata documents, pre-registered clients, dynamic client registration,
// PKCE, scope selection and step-up, issuer checks; golang.org/x/oauth2 for
// the token endpoint) with a loopback redirect listener, and keeps each
// server's token in the user's config directory (0600), refreshed by
// golang.org/x/oauth2.
package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"
)

// Store keeps one Record per MCP server URL as a JSON file in Dir (the
// directory 0700, each file 0600: the files hold bearer and refresh tokens).
type Store struct {
	// Dir is the token directory; DefaultDir gives the usual one.
	Dir string
}

// DefaultDir is the token directory: $STRATA_MCP_TOKEN_DIR when set, else
// mcp-oauth/ in the user's config directory (os.UserConfigDir: $XDG_CONFIG_HOME
// or ~/.config on Linux, then strata/). The error is os.UserConfigDir's.
func DefaultDir() (string, error) {
	if d := os.Getenv("STRATA_MCP_TOKEN_DIR"); d != "" {
		return d, nil
	}
	c, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("MCP OAuth token directory: %w (set STRATA_MCP_TOKEN_DIR)", err)
	}
	return filepath.Join(c, "strata", "mcp-oauth"), nil
}

// Record is what is kept for one server: the client the authorization
// server knows strata as, and the token with its refresh token.
type Record struct {
	Server       string           `json:"server"` // the server's name in the config that authorized it
	URL          string           `json:"url"`    // the MCP endpoint
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"authorization_endpoint"`
	TokenURL     string           `json:"token_endpoint"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
	Saved        time.Time        `json:"saved"`
}

// config is the oauth2.Config that refreshes r's token.
func (r *Record) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: r.ClientID, ClientSecret: r.ClientSecret, Scopes: r.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: r.AuthURL, TokenURL: r.TokenURL, AuthStyle: r.AuthStyle},
	}
}

// Path is the file holding url's record: a hash of the URL, so that any
// URL makes a safe file name.
func (s Store) Path(url string) string {
	h := sha256.Sum256([]byte(url))
	return filepath.Join(s.Dir, hex.EncodeToString(h[:12])+".json")
}

// Load returns url's record, or nil and no error when there is none. A file
// that cannot be read or parsed is an error naming it.
func (s Store) Load(url string) (*Record, error) {
	p := s.Path(url)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("MCP OAuth token file %s: %w (delete it, or run 'strata mcp logout')", p, err)
	}
	if r.URL != url || r.Token == nil {
		return nil, nil // a hash collision or an empty record: authorize again
	}
	return &r, nil
}

// Save writes r (0600, in a 0700 directory), replacing the file atomically.
func (s Store) Save(r *Record) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	r.Saved = time.Now().UTC()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, ".token-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), s.Path(r.URL))
}

// Delete removes url's record; it reports whether there was one.
func (s Store) Delete(url string) (bool, error) {
	err := os.Remove(s.Path(url))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
