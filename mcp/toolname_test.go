package mcp

import (
	"regexp"
	"strings"
	"testing"
)

// The kiro-cli turn anatomy's make_tool_spec: "4. Sanitize names and
// return". Every name ToolName gives is accepted by every provider strata
// speaks: Anthropic, OpenAI and Bedrock take ^[a-zA-Z0-9_-]{1,64}$, Gemini
// also wants the first character to be a letter or "_". Distinct tools keep
// distinct names, long ones too.
func TestToolNamesAcceptedByEveryProvider(t *testing.T) {
	legal := regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`)
	long := strings.Repeat("x", 70)
	cases := []struct{ server, tool, want string }{
		{"git", "git_status", "git___git_status"},
		{"awslabs.aws-iac-mcp-server", "validate", "awslabs_aws-iac-mcp-server___validate"},
		{"1password", "get item", "_1password___get_item"},
		{"-dash", "t", "_-dash___t"},
		{"ünï", "tool/x", "_n____tool_x"},
		{"s", long + "a", ""},
		{"s", long + "b", ""},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		got := ToolName(c.server, c.tool)
		if !legal.MatchString(got) {
			t.Errorf("ToolName(%q, %q) = %q: not accepted by every provider", c.server, c.tool, got)
		}
		if c.want != "" && got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
		if seen[got] {
			t.Errorf("ToolName(%q, %q) = %q repeats an earlier name", c.server, c.tool, got)
		}
		seen[got] = true
	}
}
