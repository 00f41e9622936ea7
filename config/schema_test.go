package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeAgent(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, ".kiro", "agents", "broken.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSchemaErrors(t *testing.T) {
	cases := []struct {
		name, body, pointer, expected string
	}{
		{"hook timeout string", `{"name":"a","hooks":{"preToolUse":[{"command":"x","timeout_ms":"soon"}]}}`,
			"/hooks/preToolUse/0/timeout_ms", "integer"},
		{"hook timeout negative", `{"hooks":{"stop":[{"command":"x","timeout_ms":-5}]}}`,
			"/hooks/stop/0/timeout_ms", "number >= 0"},
		{"hook without command", `{"hooks":{"agentSpawn":[{"matcher":"x"}]}}`,
			"/hooks/agentSpawn/0", `property "command"`},
		{"hooks not array", `{"hooks":{"userPromptSubmit":{"command":"x"}}}`,
			"/hooks/userPromptSubmit", "array"},
		{"cache ttl float", `{"hooks":{"postToolUse":[{"command":"x","cache_ttl_seconds":1.5}]}}`,
			"/hooks/postToolUse/0/cache_ttl_seconds", "integer"},
		{"tools string", `{"tools":"fs_read"}`, "/tools", "array"},
		{"tools item number", `{"tools":["fs_read",7]}`, "/tools/1", "string"},
		{"allowedTools repeat", `{"allowedTools":["a","a"]}`, "/allowedTools/1", "unique items"},
		{"resource scheme", `{"resources":["file://a.md","http://x"]}`, "/resources/1", "string matching"},
		{"resource number", `{"resources":[3]}`, "/resources/0", "string or object"},
		{"mcp without command or url", `{"mcpServers":{"x":{"args":[]}}}`, "/mcpServers/x", `property "command"`},
		{"mcp args string", `{"mcpServers":{"x":{"command":"c","args":"-v"}}}`, "/mcpServers/x/args", "array"},
		{"mcp timeout negative", `{"mcpServers":{"x":{"command":"c","timeout":-1}}}`, "/mcpServers/x/timeout", "number >= 0"},
		{"mcp env value", `{"mcpServers":{"x":{"command":"c","env":{"A":1}}}}`, "/mcpServers/x/env/A", "string"},
		{"mcp type", `{"mcpServers":{"x":{"command":"c","type":"grpc"}}}`, "/mcpServers/x/type", `"stdio"`},
		{"mcp server not object", `{"mcpServers":{"x":"c"}}`, "/mcpServers/x", "object"},
		{"name number", `{"name":5}`, "/name", "string"},
		{"description number", `{"description":3}`, "/description", "string or null"},
		{"useLegacyMcpJson string", `{"useLegacyMcpJson":"yes"}`, "/useLegacyMcpJson", "boolean"},
		{"includeMcpJson string", `{"includeMcpJson":"true"}`, "/includeMcpJson", "boolean"},
		{"toolsSettings array", `{"toolsSettings":{"fs_write":[]}}`, "/toolsSettings/fs_write", "object"},
		{"toolAliases value", `{"toolAliases":{"@a/b":false}}`, "/toolAliases/@a~1b", "string"},
		{"document array", `[]`, "", "object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeAgent(t, t.TempDir(), c.body)
			_, err := LoadAgent(p)
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("want *SchemaError, got %v", err)
			}
			if se.File != p || se.Pointer != c.pointer || !strings.Contains(se.Expected, c.expected) || se.Err == nil {
				t.Fatalf("got file %q pointer %q expected %q; want %q %q", se.File, se.Pointer, se.Expected, c.pointer, c.expected)
			}
			msg := err.Error()
			for _, part := range []string{p, c.expected} {
				if !strings.Contains(msg, part) {
					t.Errorf("message %q lacks %q", msg, part)
				}
			}
			if c.pointer != "" && !strings.Contains(msg, ": "+c.pointer+": ") {
				t.Errorf("message %q lacks pointer %q", msg, c.pointer)
			}
		})
	}
}

func TestLoadAgentErrors(t *testing.T) {
	dir := t.TempDir()
	p := writeAgent(t, dir, "{\n  \"name\": \"a\",\n  \"tools\": [\"x\",]\n}")
	_, err := LoadAgent(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("syntax error: %v", err)
	}
	_, err = LoadAgent(filepath.Join(dir, "absent.json"))
	if err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("missing file: %v", err)
	}
	for _, body := range []string{"", "null", `"x"`, "1", `{"prompt":null,"model":null,"description":null}`} {
		p := writeAgent(t, t.TempDir(), body)
		a, err := LoadAgent(p)
		if body == `{"prompt":null,"model":null,"description":null}` {
			if err != nil || a.Name != "broken" {
				t.Errorf("nulls: %v %+v", err, a)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: want an error", body)
		}
	}
}

// TestSchemaAcceptsDocExamples loads the examples of agent-format.md and the
// kiro extensions.
func TestSchemaAcceptsDocExamples(t *testing.T) {
	bodies := []string{
		`{"name":"aws-rust-agent","description":"A specialized agent","mcpServers":{"fetch":{"command":"fetch3.1","args":[]},
		  "git":{"command":"git-mcp","args":[],"env":{"GIT_CONFIG_GLOBAL":"/dev/null"},"timeout":120000}},
		  "tools":["fs_read","fs_write","execute_bash","use_aws","@git","@fetch/fetch_url"],
		  "toolAliases":{"@git/git_status":"status","@fetch/fetch_url":"get"},"allowedTools":["fs_read","@git/git_status"],
		  "toolsSettings":{"fs_write":{"allowedPaths":["src/**","tests/**","Cargo.toml"]},"use_aws":{"allowedServices":["s3","lambda"]}},
		  "resources":["file://README.md","file://docs/**/*.md"],
		  "hooks":{"agentSpawn":[{"command":"git status"}],"userPromptSubmit":[{"command":"ls -la"}]},
		  "useLegacyMcpJson":true,"model":"claude-sonnet-4"}`,
		`{"name":"k","resources":["skill://.kiro/skills/**/SKILL.md",{"type":"knowledgeBase","source":"file://./docs","name":"Docs"}],
		  "mcpServers":{"remote":{"type":"http","url":"https://example.com/mcp","headers":{"A":"b"},"oauth":{"redirectUri":"127.0.0.1:7778"}}},
		  "keyboardShortcut":"ctrl+shift+k","welcomeMessage":"hi","includeMcpJson":false,"version":"1.0.0",
		  "hooks":{"preToolUse":[{"command":"x","matcher":"fs_*","timeout_ms":100,"cache_ttl_seconds":5,"max_output_size":1024}]}}`,
	}
	for i, b := range bodies {
		p := writeAgent(t, t.TempDir(), b)
		a, err := LoadAgent(p)
		if err != nil {
			t.Fatalf("example %d: %v", i, err)
		}
		if i == 1 {
			wantWarning(t, a.Warnings, p, "/version", "unknown field")
			if a.Resources[1].Scheme() != "knowledgeBase" || a.Resources[1].Location() != "./docs" {
				t.Errorf("knowledge base resource %+v", a.Resources[1])
			}
			if s := a.MCPServers["remote"]; s.Transport() != "http" || s.Timeout().Milliseconds() != 120000 {
				t.Errorf("remote server %+v", s)
			}
		}
	}
}

// FuzzLoadAgent checks LoadAgent never panics on arbitrary input.
func FuzzLoadAgent(f *testing.F) {
	for _, s := range []string{`{}`, `{"hooks":{"x":[{}]}}`, `{"resources":[{}]}`, `{"mcpServers":{"":{"command":""}}}`,
		`{"toolsSettings":{"shell":{"allowedCommands":"x"}}}`, `{"prompt":"file://"}`, `{"prompt":"@"}`, "\xff"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		p := filepath.Join(dir, "a.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if a, err := LoadAgent(p); err == nil {
			_, _ = Resolve(a, dir)
			_ = a.ToolAllowed("x")
			_ = a.ToolSettings("shell")
		}
	})
}
