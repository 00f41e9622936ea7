package strata

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
			mcp.ServerConfig{URL: "http://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer x"}, Timeout: mcp.DefaultTimeout}},
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
