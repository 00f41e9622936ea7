// Package mcp is strata's MCP client manager, on the official
// github.com/modelcontextprotocol/go-sdk: it launches MCP servers described
// by its own ServerConfig (stdio or streamable HTTP), lists their tools and prompts,
// calls tools, and terminates them — kiro-cli's McpManager (docs/kiro.md, "MCP"):
// LaunchServer, GetToolSpecs, GetPrompts, GetPrompt, ExecuteTool, Terminate.
//
// The server set is frozen after initialization (docs/kiro.md, rule 17):
// Freeze ends launching, and a new agent config gets a
// new Manager (agent swap). A server that crashed can be relaunched.
//
// The exported API uses no SDK type and no config format: callers convert
// their server entries to ServerConfig (agentfile.MCPServerConfig does it
// for kiro / Amazon Q agent configs), and prompts come back as Prompt and
// llm.Message.
//
// Tools reach the model as "<server>___<tool>" sanitized to the name rule
// providers accept (≤ 64 characters of [a-zA-Z0-9_-]); ToolName maps such a
// name back to "@server/tool", the form agent configs use.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/strata-agent/strata/mcp/oauth"
)

// Errors returned by the Manager.
var (
	// ErrServerAlreadyLaunched: LaunchServer for a name already launched.
	ErrServerAlreadyLaunched = errors.New("mcp: server already launched")
	// ErrFrozen: LaunchServer after Freeze (start a new Manager instead).
	ErrFrozen = errors.New("mcp: the server set is frozen after initialization")
	// ErrNotRunning: the server is not connected (never launched, failed to
	// launch, crashed or terminated).
	ErrNotRunning = errors.New("mcp: server is not running")
)

// State is a server's state.
type State string

// Server states.
const (
	Running    State = "running"
	Failed     State = "failed"  // the launch failed
	Crashed    State = "crashed" // the connection ended while in use
	Terminated State = "terminated"
	Disabled   State = "disabled" // configured with "disabled": true; not started
)

// Options configure a Manager.
type Options struct {
	// Stderr receives each stdio server's stderr, every line prefixed with
	// "[mcp NAME] " (nil = discarded).
	Stderr io.Writer
	// Roots are directories offered to servers that ask for roots (absolute
	// paths).
	Roots []string
	// Env is the base environment of stdio servers (nil = os.Environ()); a
	// server's configured env is added on top.
	Env []string
	// Dir is the working directory of stdio servers, and the directory a
	// relative command path (./bin/server) is taken from: the workspace,
	// as kiro-cli and Claude Code start a project's servers in the project
	// (docs/kiro.md, "MCP"). "" = the manager's process's directory, which for a
	// library or a test is rarely the workspace.
	Dir string
	// OAuth is how URL servers are authorized when they answer 401
	// (docs/mcp-auth.md).
	OAuth OAuthOptions
	// Elicit puts servers' elicitation requests to the person; nil = the
	// elicitation capability is not offered (servers cannot ask).
	Elicit Elicitor
}

// OAuthOptions are the Manager-wide OAuth settings; a server's own are in
// ServerConfig.OAuth.
type OAuthOptions struct {
	// Store keeps tokens across processes; a zero Store keeps them only for
	// the Manager's life.
	Store oauth.Store
	// Browser is how the authorization URL reaches the person ("" = open
	// the system browser).
	Browser oauth.Browser
	// Out receives the authorization URL and progress (nil = discarded).
	Out io.Writer
	// ClientMetadataURL is strata's client ID metadata document URL, used
	// with authorization servers that support them ("" = not used).
	ClientMetadataURL string
}

// Manager runs the MCP servers of one agent. Safe for concurrent use.
type Manager struct {
	opts    Options
	client  *sdk.Client
	mu      sync.Mutex
	servers map[string]*server
	frozen  bool
	nextTok atomic.Int64
	progMu  sync.Mutex
	prog    map[string]func(string)
}

type server struct {
	name    string
	cfg     ServerConfig
	state   State
	err     error
	session *sdk.ClientSession
	cmd     *exec.Cmd
	tools   []*sdk.Tool
	info    *sdk.Implementation
	stderr  *tailBuffer // a stdio server's last stderr bytes; nil for HTTP
}

// NewManager returns a Manager with no server launched.
func NewManager(o Options) *Manager {
	m := &Manager{opts: o, servers: map[string]*server{}, prog: map[string]func(string){}}
	co := &sdk.ClientOptions{
		ProgressNotificationHandler: m.onProgress,
		ToolListChangedHandler:      m.onToolsChanged,
	}
	if o.Elicit != nil {
		co.ElicitationHandler = m.onElicit
	}
	m.client = sdk.NewClient(&sdk.Implementation{Name: "strata", Version: "0.1"}, co)
	for _, r := range o.Roots {
		m.client.AddRoots(&sdk.Root{URI: "file://" + r})
	}
	return m
}

// LaunchServer starts and initializes server name with cfg and lists its
// tools, within cfg's timeout. A disabled server is recorded as Disabled and
// not started. Errors: ErrFrozen, ErrServerAlreadyLaunched, or the launch
// failure — including a cfg with neither Command nor URL, or a negative
// Timeout — after which the server is recorded as Failed, with the error.
func (m *Manager) LaunchServer(ctx context.Context, name string, cfg ServerConfig) error {
	m.mu.Lock()
	if m.frozen {
		m.mu.Unlock()
		return fmt.Errorf("%w: cannot launch %q", ErrFrozen, name)
	}
	if _, ok := m.servers[name]; ok {
		m.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrServerAlreadyLaunched, name)
	}
	s := &server{name: name, cfg: cfg}
	m.servers[name] = s
	m.mu.Unlock()
	if cfg.Disabled {
		m.set(s, Disabled, nil)
		return nil
	}
	return m.connect(ctx, s)
}

// Relaunch restarts a server that failed, crashed or was terminated.
func (m *Manager) Relaunch(ctx context.Context, name string) error {
	s, err := m.get(name)
	if err != nil {
		return err
	}
	m.mu.Lock()
	st := s.state
	m.mu.Unlock()
	if st == Running {
		return fmt.Errorf("%w: %q is running", ErrServerAlreadyLaunched, name)
	}
	return m.connect(ctx, s)
}

func (m *Manager) connect(ctx context.Context, s *server) error {
	if err := s.cfg.check(s.name); err != nil {
		m.set(s, Failed, err)
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	var t sdk.Transport
	var cmd *exec.Cmd
	if s.cfg.URL != "" {
		// MaxRetries 0: the go-sdk's default reconnection, which waits as
		// long as the server's SSE retry field says and resumes with
		// Last-Event-ID (docs/mcp-auth.md, "Reconnection").
		st := &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: headerClient(s.cfg.Headers)}
		if !hasAuthorization(s.cfg.Headers) {
			st.OAuthHandler = m.oauthHandler(s)
		}
		t = st
	} else {
		cmd = exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = m.opts.Dir
		cmd.Env = m.opts.Env
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		keys := make([]string, 0, len(s.cfg.Env))
		for k := range s.cfg.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cmd.Env = append(cmd.Env, k+"="+s.cfg.Env[k])
		}
		tail := &tailBuffer{max: StderrTailBytes}
		m.mu.Lock()
		s.stderr = tail // a relaunch starts a new tail
		m.mu.Unlock()
		cmd.Stderr = io.MultiWriter(prefixWriter(m.opts.Stderr, "[mcp "+s.name+"] "), tail)
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	sess, err := m.client.Connect(ctx, t, nil)
	if err != nil {
		err = fmt.Errorf("launch MCP server %q: %w", s.name, err)
		m.set(s, Failed, err)
		return err
	}
	tools, err := listTools(ctx, sess)
	if err != nil {
		sess.Close()
		err = fmt.Errorf("MCP server %q: tools/list: %w", s.name, err)
		m.set(s, Failed, err)
		return err
	}
	m.mu.Lock()
	s.session, s.cmd, s.tools, s.state, s.err = sess, cmd, tools, Running, nil
	if r := sess.InitializeResult(); r != nil {
		s.info = r.ServerInfo
	}
	m.mu.Unlock()
	return nil
}

// oauthHandler is s's authorization: its stored token and, on a 401, the
// authorization flow (docs/mcp-auth.md).
func (m *Manager) oauthHandler(s *server) *oauth.Handler {
	o := m.opts.OAuth
	return oauth.NewHandler(oauth.Config{
		Server: s.name, URL: s.cfg.URL, Store: o.Store, Browser: o.Browser, Out: o.Out,
		RedirectAddr: s.cfg.OAuth.RedirectAddr, Scopes: s.cfg.OAuth.Scopes,
		ClientID: s.cfg.OAuth.ClientID, ClientSecret: s.cfg.OAuth.ClientSecret,
		ClientMetadataURL: o.ClientMetadataURL,
	})
}

// hasAuthorization reports whether headers set Authorization themselves.
func hasAuthorization(h map[string]string) bool {
	for k := range h {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

func listTools(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Freeze ends initialization: later LaunchServer calls fail with ErrFrozen.
func (m *Manager) Freeze() {
	m.mu.Lock()
	m.frozen = true
	m.mu.Unlock()
}

// Terminate closes every server (stdio servers get stdin closed, then
// SIGTERM after 2 s). The Manager stays frozen; an agent swap makes a new one.
func (m *Manager) Terminate() {
	m.mu.Lock()
	m.frozen = true
	var open []*sdk.ClientSession
	for _, s := range m.servers {
		if s.session != nil {
			open = append(open, s.session)
			s.session, s.state = nil, Terminated
		}
	}
	m.mu.Unlock()
	for _, s := range open {
		_ = s.Close()
	}
}

// Status is one server's state, for `strata mcp list`.
type Status struct {
	Name    string   `json:"name"`
	State   State    `json:"state"`
	Server  string   `json:"server,omitempty"` // serverInfo name and version
	Tools   []string `json:"tools"`            // the server's own tool names
	Error   string   `json:"error,omitempty"`
	Command string   `json:"command,omitempty"` // command line or URL
	// StderrTail is the end (at most StderrTailBytes) of a stdio server's
	// stderr, for a server that failed or crashed: usually the reason.
	StderrTail string `json:"stderr_tail,omitempty"`
}

// Statuses returns every server's status, sorted by name.
func (m *Manager) Statuses() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Status
	for _, s := range m.servers {
		st := Status{Name: s.name, State: s.state, Tools: []string{}, Command: s.cfg.describe()}
		if s.err != nil {
			st.Error = s.err.Error()
		}
		if s.state == Failed || s.state == Crashed {
			st.StderrTail = s.stderr.String()
		}
		if s.info != nil {
			st.Server = s.info.Name + " " + s.info.Version
		}
		for _, t := range s.tools {
			st.Tools = append(st.Tools, t.Name)
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (m *Manager) get(name string) (*server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.servers[name]
	if !ok {
		return nil, fmt.Errorf("%w: no server %q was launched", ErrNotRunning, name)
	}
	return s, nil
}

// running returns the server's session, or ErrNotRunning naming its state.
func (m *Manager) running(name string) (*server, *sdk.ClientSession, error) {
	s, err := m.get(name)
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.state != Running || s.session == nil {
		msg := fmt.Sprintf("%q is %s", name, s.state)
		if s.err != nil {
			msg += ": " + s.err.Error()
		}
		return nil, nil, fmt.Errorf("%w: %s", ErrNotRunning, msg)
	}
	return s, s.session, nil
}

func (m *Manager) set(s *server, st State, err error) {
	m.mu.Lock()
	s.state, s.err = st, err
	m.mu.Unlock()
}

func (m *Manager) onToolsChanged(ctx context.Context, req *sdk.ToolListChangedRequest) {
	m.mu.Lock()
	var s *server
	for _, x := range m.servers {
		if x.session == req.Session {
			s = x
		}
	}
	m.mu.Unlock()
	if s == nil {
		return
	}
	go func() { // not on the connection's reader goroutine
		c, cancel := context.WithTimeout(context.Background(), s.cfg.timeout())
		defer cancel()
		if tools, err := listTools(c, req.Session); err == nil {
			m.mu.Lock()
			if s.session == req.Session {
				s.tools = tools
			}
			m.mu.Unlock()
		}
	}()
}

func (m *Manager) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	// Held while f runs, so no update is delivered after ExecuteTool
	// returned (it deletes the token under the same lock).
	m.progMu.Lock()
	defer m.progMu.Unlock()
	f := m.prog[fmt.Sprint(p.ProgressToken)]
	if f == nil {
		return
	}
	msg := fmt.Sprintf("progress %g", p.Progress)
	if p.Total > 0 {
		msg += fmt.Sprintf("/%g", p.Total)
	}
	if p.Message != "" {
		msg += ": " + p.Message
	}
	f(msg)
}
