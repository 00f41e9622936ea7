package agentfile

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/mcp"
)

// mcpServers entries as agent files write them convert to the manager's
// config: stdio fields, HTTP fields, the timeout in milliseconds, and the
// config's default timeout when absent (equal to the manager's default).
func TestMCPServerConvertsAgentEntries(t *testing.T) {
	for _, c := range []struct {
		name, entry string
		want        mcp.ServerConfig
	}{
		{"stdio", `{"command":"npx","args":["-y","srv"],"env":{"K":"v"},"timeout":5000}`,
			mcp.ServerConfig{Command: "npx", Args: []string{"-y", "srv"}, Env: map[string]string{"K": "v"}, Timeout: 5 * time.Second}},
		{"http", `{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer x"},"oauthScopes":["openid"]}`,
			mcp.ServerConfig{URL: "http://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer x"}, Timeout: mcp.DefaultTimeout,
				OAuth: mcp.OAuthConfig{Scopes: []string{"openid"}}}},
		// kiro's oauth object (docs/mcp-auth.md): redirectUri as host:port or
		// a URL, and a pre-registered client's clientId / clientSecret.
		{"oauth", `{"url":"https://mcp.example/mcp","oauth":{"redirectUri":"127.0.0.1:7778","clientId":"c","clientSecret":"s"}}`,
			mcp.ServerConfig{URL: "https://mcp.example/mcp", Timeout: mcp.DefaultTimeout,
				OAuth: mcp.OAuthConfig{RedirectAddr: "127.0.0.1:7778", ClientID: "c", ClientSecret: "s"}}},
		{"oauth-url", `{"url":"https://mcp.example/mcp","oauth":{"redirectUri":"http://localhost:7778/callback"}}`,
			mcp.ServerConfig{URL: "https://mcp.example/mcp", Timeout: mcp.DefaultTimeout, OAuth: mcp.OAuthConfig{RedirectAddr: "localhost:7778"}}},
		{"disabled", `{"command":"rg-mcp","disabled":true,"autoApprove":["search"]}`,
			mcp.ServerConfig{Command: "rg-mcp", Disabled: true, Timeout: config.DefaultMCPTimeout}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s config.MCPServer
			if err := json.Unmarshal([]byte(c.entry), &s); err != nil {
				t.Fatal(err)
			}
			if got := MCPServerConfig(s); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}
