package bedrock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/capture"
	"github.com/strata-agent/strata/llm"
)

func mustNew(t *testing.T, cfg Config) *Provider {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// isolateAWS points the AWS SDK's default chain at files in a temp dir and
// clears the credential variables, so only what the test writes is found
// (and no instance-metadata lookup is tried).
func isolateAWS(t *testing.T, credentials string) {
	t.Helper()
	dir := t.TempDir()
	cred := filepath.Join(dir, "credentials")
	if err := os.WriteFile(cred, []byte(credentials), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", cred)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config")) // absent
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(v, "")
	}
}

// signedWith sends one request through p over a recording transport and
// returns the access key id of its SigV4 Authorization header.
func signedWith(t *testing.T, cfg Config) string {
	t.Helper()
	tr := &capture.Transport{}
	cfg.HTTPClient = tr.Client()
	p := mustNew(t, cfg)
	_, err := p.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}, nil)
	reqs := tr.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded (Stream error: %v)", len(reqs), err)
	}
	auth := reqs[0].Header.Get("Authorization")
	_, after, ok := strings.Cut(auth, "Credential=")
	if !ok {
		t.Fatalf("Authorization %q has no SigV4 credential", auth)
	}
	key, _, _ := strings.Cut(after, "/")
	return key
}

// Static keys sign the request; with no keys the default chain is used,
// reading the named profile (or AWS_PROFILE) from the shared credentials
// file.
func TestCredentials(t *testing.T) {
	isolateAWS(t, "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n\n[dev]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = s2\n")
	base := Config{Region: "us-east-1", BaseURL: "http://127.0.0.1:1"}
	static := base
	static.AccessKeyID, static.SecretAccessKey = "AKIDSTATIC", "secret"
	profile := base
	profile.Profile = "dev"
	for _, c := range []struct {
		name string
		cfg  Config
		env  string // AWS_PROFILE
		want string
	}{
		{"static keys", static, "dev", "AKIDSTATIC"},
		{"named profile", profile, "", "AKIDPROFILE"},
		{"AWS_PROFILE", base, "dev", "AKIDPROFILE"},
		{"default profile", base, "", "AKIDDEFAULT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("AWS_PROFILE", c.env)
			if got := signedWith(t, c.cfg); got != c.want {
				t.Errorf("signed with %s, want %s", got, c.want)
			}
		})
	}
}

// Config mistakes are errors from New naming the field.
func TestNewErrors(t *testing.T) {
	isolateAWS(t, "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n")
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no region", Config{AccessKeyID: "a", SecretAccessKey: "b"}, "Region"},
		{"half a key", Config{Region: "us-east-1", AccessKeyID: "a"}, "both AccessKeyID and SecretAccessKey"},
		{"token without keys", Config{Region: "us-east-1", SessionToken: "t"}, "both AccessKeyID and SecretAccessKey"},
		{"keys and profile", Config{Region: "us-east-1", AccessKeyID: "a", SecretAccessKey: "b", Profile: "dev"}, `Profile "dev"`},
		{"unknown profile", Config{Region: "us-east-1", Profile: "nope"}, `profile "nope"`},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}

// Knobs Converse cannot express are errors before anything is sent; tool
// choice none withholds the tools while the history has no tool blocks.
func TestToolChoiceAndReasoningRules(t *testing.T) {
	tools := []llm.ToolSpec{{Name: "f", InputSchema: []byte(`{"type":"object"}`)}}
	history := []llm.Message{llm.UserText("hi"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUseBlock("t1", "f", []byte(`{}`))}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("t1", "ok", false)}}}
	for _, c := range []struct {
		name string
		req  llm.Request
		want string // error substring; "" = sent
	}{
		{"none without tool history", llm.Request{Tools: tools, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}}, ""},
		{"none with tool history", llm.Request{Messages: history, Tools: tools, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}}, "messages[1] holds tool_use/tool_result"},
		{"disable parallel", llm.Request{Tools: tools, ToolChoice: llm.ToolChoice{DisableParallel: true}}, "tool_choice.disable_parallel"},
		{"disable parallel without tools", llm.Request{ToolChoice: llm.ToolChoice{DisableParallel: true}}, ""},
		{"small budget", llm.Request{Reasoning: llm.Reasoning{BudgetTokens: 100}}, "reasoning.budget_tokens 100"},
		{"budget over max_tokens", llm.Request{MaxTokens: 2000, Reasoning: llm.Reasoning{BudgetTokens: 4000}}, "reasoning.budget_tokens 4000"},
		{"effort without a Claude form", llm.Request{Reasoning: llm.Reasoning{Effort: "minimal"}}, `reasoning.effort "minimal"`},
		{"max_tokens over int32", llm.Request{MaxTokens: 1 << 31}, "32-bit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			req.Model = "m"
			if req.Messages == nil {
				req.Messages = []llm.Message{llm.UserText("hi")}
			}
			tr := &capture.Transport{}
			p := mustNew(t, Config{Region: "us-east-1", AccessKeyID: "a", SecretAccessKey: "b", BaseURL: "http://127.0.0.1:1", HTTPClient: tr.Client()})
			_, err := p.Stream(context.Background(), &req, nil)
			sent := len(tr.Requests())
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) || sent != 0 {
					t.Fatalf("error %v after %d requests, want one naming %q before sending", err, sent, c.want)
				}
				return
			}
			if sent != 1 || !errors.Is(err, capture.ErrNotSent) {
				t.Fatalf("%d requests sent, error %v", sent, err)
			}
			if body := string(tr.Requests()[0].Body); strings.Contains(body, "toolConfig") || strings.Contains(body, "additionalModelRequestFields") {
				t.Errorf("body %s", body)
			}
		})
	}
}
