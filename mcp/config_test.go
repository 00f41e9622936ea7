package mcp

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A config the manager cannot launch is recorded as Failed with an error
// naming the server and the field; a disabled one is recorded as Disabled
// without being started. None of these starts a process.
func TestLaunchServerRecordsUnlaunchableConfigs(t *testing.T) {
	for _, c := range []struct {
		name    string
		cfg     ServerConfig
		state   State
		wantErr string
	}{
		{"empty", ServerConfig{}, Failed, `mcp server "empty" has neither command nor url`},
		{"negative", ServerConfig{Command: "x", Timeout: -time.Second}, Failed, `mcp server "negative": timeout -1s is negative`},
		{"off", ServerConfig{Command: "never-started", Args: []string{"-v"}, Disabled: true}, Disabled, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewManager(Options{})
			defer m.Terminate()
			err := m.LaunchServer(context.Background(), c.name, c.cfg)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("LaunchServer error %v; want %q", err, c.wantErr)
			}
			st := m.Statuses()
			if len(st) != 1 || st[0].State != c.state || st[0].Command != c.cfg.describe() {
				t.Fatalf("statuses %+v; want one %s", st, c.state)
			}
			if c.wantErr != "" && !strings.Contains(st[0].Error, c.wantErr) {
				t.Errorf("status error %q; want %q", st[0].Error, c.wantErr)
			}
		})
	}
}

// A zero timeout is the default; Status.Command shows the command line or
// the URL.
func TestServerConfigDefaults(t *testing.T) {
	if got := (ServerConfig{}).timeout(); got != DefaultTimeout {
		t.Errorf("zero timeout = %s; want %s", got, DefaultTimeout)
	}
	if got := (ServerConfig{Timeout: 5 * time.Second}).timeout(); got != 5*time.Second {
		t.Errorf("timeout %s", got)
	}
	if got := (ServerConfig{Command: "npx", Args: []string{"-y", "srv"}}).describe(); got != "npx -y srv" {
		t.Errorf("command %q", got)
	}
	if got := (ServerConfig{URL: "http://127.0.0.1:9/mcp"}).describe(); got != "http://127.0.0.1:9/mcp" {
		t.Errorf("url %q", got)
	}
}

// The SDK's prompt converts field by field; nil arguments are skipped.
func TestPromptConversion(t *testing.T) {
	got := prompt(&sdk.Prompt{Name: "review", Title: "Review", Description: "review code",
		Arguments: []*sdk.PromptArgument{{Name: "file", Description: "path", Required: true}, nil, {Name: "style"}}})
	want := Prompt{Name: "review", Title: "Review", Description: "review code",
		Arguments: []PromptArgument{{Name: "file", Description: "path", Required: true}, {Name: "style"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
