// Package acp serves strata as an ACP (Agent Client Protocol) agent on the
// official github.com/coder/acp-go-sdk, so editors and ACP clients can drive
// the loop: initialize, authenticate, session/new, session/load (the stored
// session replayed as updates), session/prompt, session/cancel and
// session/set_mode (modes = the approval modes ask, allowlist, all). Every
// loop event becomes a session/update (see updates.go), and tool approvals
// go through session/request_permission.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
)

// Setup is what a new or loaded session needs from its host.
type Setup struct {
	SessionID string // the stored session's id
	Cwd       string // the client's working directory
	Bus       *event.Bus
	Approver  agent.Approver
	Mode      agent.Mode
	// Editor and Terminal are the client's file and terminal methods, set
	// when the client offers them (nil otherwise); the host puts them in the
	// tools' tool.Env.
	Editor   tool.Editor
	Terminal tool.Terminal
	// MCPServers are the client's MCP servers for this session (session/new
	// or session/load mcpServers), to run beside the agent's own.
	MCPServers []config.NamedMCPServer
	// LoopID, History and Next restore a stored loop (session/load); an
	// empty LoopID means a new loop.
	LoopID  string
	History []llm.Message
	Next    int
}

// Host builds agents for the server (provider, layout, tools, hooks — the
// same setup as `strata run`).
type Host interface {
	// NewAgent returns the agent of a session.
	NewAgent(ctx context.Context, s Setup) (Built, error)
}

// Built is a session's agent as the host built it.
type Built struct {
	Agent *agent.Agent
	// Release stops what the host started for the session (the client's
	// MCP servers); the server calls it when the session is replaced or the
	// client disconnects. Nil means nothing to release.
	Release func()
	// Prompts are the MCP servers whose prompts the client gets as slash
	// commands.
	Prompts []PromptSource
}

// mcpServers converts the client's MCP servers (stdio and HTTP; SSE and
// ACP transports are not advertised) to agent-config servers. Names must be
// unique and non-empty.
func mcpServers(in []sdk.McpServer) ([]config.NamedMCPServer, error) {
	var out []config.NamedMCPServer
	seen := map[string]bool{}
	for i, m := range in {
		var n config.NamedMCPServer
		switch {
		case m.Stdio != nil:
			env := map[string]string{}
			for _, e := range m.Stdio.Env {
				env[e.Name] = e.Value
			}
			n = config.NamedMCPServer{Name: m.Stdio.Name, Server: config.MCPServer{Command: m.Stdio.Command, Args: m.Stdio.Args, Env: env}}
		case m.Http != nil:
			h := map[string]string{}
			for _, e := range m.Http.Headers {
				h[e.Name] = e.Value
			}
			n = config.NamedMCPServer{Name: m.Http.Name, Server: config.MCPServer{Type: "http", URL: m.Http.Url, Headers: h}}
		default:
			return nil, sdk.NewInvalidParams(map[string]any{"mcpServers": i, "error": "unsupported transport (strata takes stdio and http)"})
		}
		if n.Name == "" || seen[n.Name] {
			return nil, sdk.NewInvalidParams(map[string]any{"mcpServers": i, "error": fmt.Sprintf("server name %q is empty or repeated", n.Name)})
		}
		seen[n.Name] = true
		n.Source = "ACP client"
		out = append(out, n)
	}
	return out, nil
}

// Server is an ACP agent serving strata sessions. Use Serve.
type Server struct {
	host  Host
	store session.Store
	conn  *sdk.AgentSideConnection
	out   *lockedWriter

	mu       sync.Mutex
	sessions map[string]*sess
	caps     sdk.ClientCapabilities // from initialize
	mode     agent.Mode             // of new sessions
}

type sess struct {
	id       string
	agent    *agent.Agent
	bus      *event.Bus
	rec      *session.Recorder
	mode     agent.Mode
	cancel   context.CancelFunc
	mapper   *mapper
	release  func()
	commands map[string]command // slash commands: MCP prompts
}

// end stops the session's prompt, bus and client MCP servers.
func (x *sess) end() {
	if x.cancel != nil {
		x.cancel()
	}
	x.bus.Close()
	if x.release != nil {
		x.release()
	}
}

// Serve runs the server on the client's streams (strata's stdin/stdout)
// until the client disconnects. Sessions are recorded in store and start in
// mode (session/set_mode changes it). Lines that
// are not JSON objects are answered with JSON-RPC errors -32700/-32600 and
// skipped (framing.go); the SDK answers unknown methods (-32601) and
// undecodable params (-32602).
func Serve(host Host, store session.Store, mode agent.Mode, in io.Reader, out io.Writer) *Server {
	s := &Server{host: host, store: store, mode: mode, sessions: map[string]*sess{}}
	s.out = &lockedWriter{w: out}
	s.conn = sdk.NewAgentSideConnection(s, s.out, filterLines(in, s.out))
	return s
}

// Done is closed when the client disconnects.
func (s *Server) Done() <-chan struct{} { return s.conn.Done() }

// Close ends every session's bus.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.sessions {
		x.end()
	}
}

var modes = []sdk.SessionMode{
	{Id: "allowlist", Name: "Allowlist", Description: sdk.Ptr("Run the agent's allowed and read-only tools; ask for the rest")},
	{Id: "ask", Name: "Ask", Description: sdk.Ptr("Ask before every tool call")},
	{Id: "all", Name: "Allow all", Description: sdk.Ptr("Run every tool call the agent's tools permit")},
}

func modeState(m agent.Mode) *sdk.SessionModeState {
	return &sdk.SessionModeState{AvailableModes: modes, CurrentModeId: sdk.SessionModeId(m)}
}

// Initialize implements acp.Agent: protocol version 1, session loading,
// images and embedded context in prompts, stdio and HTTP MCP servers.
// The client's capabilities decide whether tools use its fs and terminal
// methods.
func (s *Server) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.mu.Lock()
	s.caps = p.ClientCapabilities
	s.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentInfo:       &sdk.Implementation{Name: "strata", Version: "0.1"},
		AuthMethods:     []sdk.AuthMethod{},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true},
		},
	}, nil
}

// Authenticate implements acp.Agent: strata needs no authentication (the
// provider keys come from the environment).
func (s *Server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession implements acp.Agent: a new stored session and loop.
func (s *Server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	servers, err := mcpServers(p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	st, err := s.store.CreateSession(ctx, session.SessionMeta{Cwd: p.Cwd})
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	x, err := s.open(ctx, Setup{SessionID: st.ID, Cwd: p.Cwd, Mode: s.mode, MCPServers: servers})
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	// The commands go out once the client has the session id: right after
	// the session/new response is written.
	if len(x.commands) > 0 {
		s.out.after(`"sessionId":"`+x.id+`"`, func() { x.mapper.send(availableCommands(x.commands)) })
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(x.id), Modes: modeState(x.mode)}, nil
}

// LoadSession implements acp.AgentLoader: the stored session's latest loop
// is replayed to the client as updates, then continues.
func (s *Server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	id := string(p.SessionId)
	servers, err := mcpServers(p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	loop, err := s.store.LatestLoop(ctx, id)
	if err != nil {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"sessionId": id, "error": err.Error()})
	}
	hist, err := s.store.History(ctx, loop)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	next, err := s.store.NextTurnIndex(ctx, loop)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	x, err := s.open(ctx, Setup{SessionID: id, Cwd: p.Cwd, Mode: s.mode, LoopID: loop, History: hist, Next: next, MCPServers: servers})
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	updates := historyUpdates(hist)
	if len(x.commands) > 0 {
		updates = append(updates, availableCommands(x.commands))
	}
	for _, u := range updates {
		if err := s.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	return sdk.LoadSessionResponse{Modes: modeState(x.mode)}, nil
}

// open builds a session's agent, bus, recorder and update mapper.
func (s *Server) open(ctx context.Context, st Setup) (*sess, error) {
	x := &sess{id: st.SessionID, bus: event.NewBus(), mode: st.Mode}
	x.mapper = &mapper{conn: s.conn, session: sdk.SessionId(x.id)}
	x.bus.SubscribeSync(x.mapper.observe)
	x.rec = session.NewRecorder(s.store, x.id)
	x.bus.SubscribeSync(x.rec.Observer())
	id := sdk.SessionId(x.id)
	st.Bus, st.Approver = x.bus, &permission{conn: s.conn, session: id}
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	if caps.Fs.ReadTextFile && caps.Fs.WriteTextFile {
		st.Editor = clientFiles{conn: s.conn, session: id}
	}
	if caps.Terminal {
		st.Terminal = clientTerminal{conn: s.conn, session: id}
	}
	b, err := s.host.NewAgent(ctx, st)
	if err != nil {
		x.bus.Close()
		return nil, err
	}
	x.agent, x.release, x.commands = b.Agent, b.Release, commands(ctx, b.Prompts)
	s.mu.Lock()
	if old, ok := s.sessions[x.id]; ok {
		old.end()
	}
	s.sessions[x.id] = x
	s.mu.Unlock()
	return x, nil
}

func (s *Server) get(id sdk.SessionId) (*sess, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.sessions[string(id)]
	if !ok {
		return nil, sdk.NewInvalidParams(map[string]any{"sessionId": string(id), "error": "unknown session: call session/new or session/load first"})
	}
	return x, nil
}

// Prompt implements acp.Agent: one user turn of the loop; updates stream as
// the loop runs, and the response carries the stop reason.
func (s *Server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	x, err := s.get(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text := promptText(p.Prompt)
	images, err := promptImages(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": err.Error()})
	}
	if text == "" && len(images) == 0 {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": "no text, resource or image content in the prompt"})
	}
	if t, ok, err := expand(ctx, x.commands, text); err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": err.Error()})
	} else if ok {
		text = t
	}
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	if x.cancel != nil {
		s.mu.Unlock()
		cancel()
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"sessionId": x.id, "error": "a prompt is already running in this session"})
	}
	x.cancel = cancel
	mode := x.mode
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		x.cancel = nil
		s.mu.Unlock()
		cancel()
	}()
	x.agent.SetMode(mode)
	res, err := x.agent.PromptWith(ctx, text, images)
	return sdk.PromptResponse{StopReason: stopReason(res, err, ctx)}, promptErr(err, ctx)
}

// stopReason maps the loop's outcome to ACP's stop reasons.
func stopReason(res *agent.Result, err error, ctx context.Context) sdk.StopReason {
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return sdk.StopReasonCancelled
	case errors.Is(err, agent.ErrMaxTurns), errors.Is(err, agent.ErrTokenLimit):
		return sdk.StopReasonMaxTurnRequests
	case res != nil && res.StopReason == llm.StopMaxTokens:
		return sdk.StopReasonMaxTokens
	case res != nil && res.StopReason == llm.StopRefusal:
		return sdk.StopReasonRefusal
	}
	return sdk.StopReasonEndTurn
}

// promptErr is the error session/prompt returns: none for outcomes ACP has a
// stop reason for, else the loop's error.
func promptErr(err error, ctx context.Context) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, agent.ErrMaxTurns) || errors.Is(err, agent.ErrTokenLimit) {
		return nil
	}
	return sdk.NewInternalError(map[string]any{"error": err.Error()})
}

// Cancel implements acp.Agent: stops the session's running prompt.
func (s *Server) Cancel(_ context.Context, p sdk.CancelNotification) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, ok := s.sessions[string(p.SessionId)]; ok && x.cancel != nil {
		x.cancel()
	}
	return nil
}

// SetSessionMode implements acp.Agent: ask, allowlist or all.
func (s *Server) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	x, err := s.get(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	m := agent.Mode(p.ModeId)
	if m != agent.ModeAsk && m != agent.ModeAllowlist && m != agent.ModeAll {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"modeId": string(p.ModeId), "valid": []string{"ask", "allowlist", "all"}})
	}
	s.mu.Lock()
	x.mode = m
	s.mu.Unlock()
	err = s.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId,
		Update: sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: p.ModeId, SessionUpdate: "current_mode_update"}}})
	return sdk.SetSessionModeResponse{}, err
}

// CloseSession, ListSessions, ResumeSession and SetSessionConfigOption are
// not advertised; they answer "method not found".
func (s *Server) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionClose)
}

// ListSessions is not supported (see CloseSession).
func (s *Server) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

// ResumeSession is not supported (see CloseSession); session/load is.
func (s *Server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// SetSessionConfigOption is not supported (see CloseSession).
func (s *Server) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

// permission asks the client through session/request_permission.
type permission struct {
	conn    *sdk.AgentSideConnection
	session sdk.SessionId
}

var permissionOptions = []sdk.PermissionOption{
	{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: "allow_once"},
	{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Always allow this tool", OptionId: "allow_always"},
	{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "reject_once"},
}

// Approve asks the client through session/request_permission and maps the
// selected option to the loop's decision.
func (p *permission) Approve(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	tc := toolCallUpdate(r.Call)
	tc.Status = sdk.Ptr(sdk.ToolCallStatusPending)
	resp, err := p.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: p.session, ToolCall: tc, Options: permissionOptions})
	if err != nil {
		return agent.RejectOnce, fmt.Errorf("session/request_permission: %w", err)
	}
	if resp.Outcome.Selected == nil {
		return agent.RejectOnce, errors.New("the client cancelled the permission request")
	}
	switch d := agent.Decision(resp.Outcome.Selected.OptionId); d {
	case agent.AllowOnce, agent.AllowAlways, agent.RejectOnce, agent.RejectAlways:
		return d, nil
	default:
		return agent.RejectOnce, fmt.Errorf("unknown permission option %q", d)
	}
}
