// Package acp serves strata as an ACP (Agent Client Protocol) agent on the
// official github.com/coder/acp-go-sdk, so editors and ACP clients can drive
// the loop: initialize, authenticate, session/new, session/load (the stored
// session replayed as updates), session/prompt (one sent while another runs
// in the session steers it: see server.steer), session/cancel and
// session/set_mode (modes = the approval modes ask, allowlist, all). Every
// loop event becomes a session/update (see updates.go), and tool approvals
// go through session/request_permission.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/llm"
)

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

// server is the ACP agent: it implements the SDK's agent method set (kept
// unexported so the SDK's types stay out of strata's API).
type server struct {
	unadvertised
	ws   *strata.Workspace
	conn *sdk.AgentSideConnection
	out  *lockedWriter

	mu       sync.Mutex
	sessions map[string]*sess
	caps     sdk.ClientCapabilities // from initialize
	mode     agent.Mode             // of new sessions
	kiro     bool                   // ServeOptions.KiroDialect
}

type sess struct {
	s        *strata.Session
	mode     agent.Mode
	cancel   context.CancelFunc // of the running prompt; nil when none runs
	done     chan struct{}      // closed when the running prompt ends
	stop     sdk.StopReason     // the ended prompt's stop reason (read after done)
	mapper   *mapper
	commands map[string]command // slash commands: MCP prompts
}

func (x *sess) id() string { return x.s.ID() }

// end stops the session's prompt, flushes its events and stops its client
// MCP servers.
func (x *sess) end() {
	if x.cancel != nil {
		x.cancel()
	}
	if err := x.s.Close(); err != nil {
		slog.Warn("acp: session close", "session", x.id(), "err", err)
	}
}

// Serve serves ws's agent over ACP on the client's streams (strata's
// stdin/stdout) and blocks until the client disconnects or ctx ends; then
// every session is ended. Sessions are recorded in ws's store and start in
// mode (session/set_mode changes it). Lines that are not JSON objects are
// answered with JSON-RPC errors -32700/-32600 and skipped (framing.go); the
// SDK answers unknown methods (-32601) and undecodable params (-32602). It
// returns ctx.Err() when ctx ended first, else nil.
func Serve(ctx context.Context, ws *strata.Workspace, mode agent.Mode, in io.Reader, out io.Writer) error {
	return ServeWith(ctx, ws, ServeOptions{Mode: mode}, in, out)
}

// ServeWith is Serve with options: the approval mode of new sessions and,
// with KiroDialect, kiro's dialect for every client (kiro.go).
func ServeWith(ctx context.Context, ws *strata.Workspace, o ServeOptions, in io.Reader, out io.Writer) error {
	s := &server{ws: ws, mode: o.Mode, kiro: o.KiroDialect, sessions: map[string]*sess{}}
	s.out = &lockedWriter{w: out}
	s.conn = sdk.NewAgentSideConnection(s, s.out, filterLines(in, s.out))
	o.Elicit.bind(s)
	var err error
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[string]*sess{}
	s.mu.Unlock()
	for _, x := range all {
		x.end()
	}
	return err
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
func (s *server) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
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
			Meta:               agentMeta(), // the kiro dialect (kiro.go)
		},
	}, nil
}

// Authenticate implements acp.Agent: strata needs no authentication (the
// provider keys come from the environment).
func (s *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession implements acp.Agent: a new stored session and loop.
func (s *server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	servers, err := mcpServers(p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	x, err := s.open(ctx, "", p.Cwd, servers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	// The commands go out once the client has the session id: right after
	// the session/new response is written.
	if len(x.commands) > 0 {
		s.out.after(`"sessionId":"`+x.id()+`"`, func() { x.mapper.send(availableCommands(x.commands)) })
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(x.id()), Modes: modeState(x.mode)}, nil
}

// LoadSession implements acp.AgentLoader: the stored session's latest loop
// is replayed to the client as updates, then continues.
func (s *server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	id := string(p.SessionId)
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	servers, err := mcpServers(p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	x, err := s.open(ctx, id, p.Cwd, servers)
	var ce *strata.ConfigError
	if errors.As(err, &ce) {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"sessionId": id, "error": err.Error()})
	}
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	updates := historyUpdates(x.s.History())
	if len(x.commands) > 0 {
		updates = append(updates, availableCommands(x.commands))
	}
	if u, ok := usageUpdate(x.s.UsageReport()); ok {
		// What the stored conversation holds, before any new call.
		updates = append(updates, u)
	}
	for _, u := range updates {
		if err := s.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	return sdk.LoadSessionResponse{Modes: modeState(x.mode)}, nil
}

// checkCwd refuses a session cwd that is not an absolute path to an
// existing directory (ACP: "cwd … must be an absolute path"): a relative
// one would resolve against wherever the agent process runs, and the
// workspace sandbox is rooted there.
func checkCwd(cwd string) error {
	switch st, err := os.Stat(cwd); {
	case !filepath.IsAbs(cwd):
		return sdk.NewInvalidParams(map[string]any{"cwd": cwd, "error": "cwd must be an absolute path"})
	case err != nil:
		return sdk.NewInvalidParams(map[string]any{"cwd": cwd, "error": "cwd does not exist: " + err.Error()})
	case !st.IsDir():
		return sdk.NewInvalidParams(map[string]any{"cwd": cwd, "error": "cwd is not a directory"})
	}
	return nil
}

// open starts a new session (id "") or continues the stored session id in
// the workspace, with the client's cwd and MCP servers, its fs and terminal
// methods when offered, permissions through the client, and the loop's
// events mapped to session/update.
func (s *server) open(ctx context.Context, id, cwd string, servers []config.NamedMCPServer) (*sess, error) {
	s.mu.Lock()
	caps, mode, d := s.caps, s.mode, dialectOf(s.caps)
	if s.kiro {
		d = dialect{toolChunks: true} // what kiro-cli sends (docs/kiro.md, "ACP updates")
	}
	s.mu.Unlock()
	x := &sess{mode: mode, mapper: &mapper{conn: s.conn, dialect: d}}
	perm := &permission{conn: s.conn}
	so := strata.SessionOptions{Cwd: cwd, Mode: mode, Approver: perm, OnEventSync: x.mapper.observe, MCPServers: servers}
	files, term := &clientFiles{conn: s.conn}, &clientTerminal{conn: s.conn}
	if caps.Fs.ReadTextFile && caps.Fs.WriteTextFile {
		so.Editor = files
	}
	if caps.Terminal {
		so.Terminal = term
	}
	var err error
	if id == "" {
		x.s, err = s.ws.NewSession(ctx, so)
	} else {
		x.s, err = s.ws.ResumeSession(ctx, id, so)
	}
	if err != nil {
		return nil, err
	}
	sid := sdk.SessionId(x.id())
	x.mapper.session, perm.session, files.session, term.session = sid, sid, sid, sid
	x.mapper.report = x.s.UsageReport
	var srcs []PromptSource
	for _, m := range x.s.MCP() {
		srcs = append(srcs, m)
	}
	x.commands = commands(ctx, srcs)
	s.mu.Lock()
	old, ok := s.sessions[x.id()]
	s.sessions[x.id()] = x
	s.mu.Unlock()
	if ok {
		old.end()
	}
	return x, nil
}

func (s *server) get(id sdk.SessionId) (*sess, error) { return lookup(&s.mu, s.sessions, id) }

// lookup returns the session id names in sessions (guarded by mu), or the
// invalid-params error a client gets for a session it never opened.
func lookup[T any](mu *sync.Mutex, sessions map[string]T, id sdk.SessionId) (T, error) {
	mu.Lock()
	defer mu.Unlock()
	x, ok := sessions[string(id)]
	if !ok {
		return x, sdk.NewInvalidParams(map[string]any{"sessionId": string(id), "error": "unknown session: call session/new or session/load first"})
	}
	return x, nil
}

// Prompt implements acp.Agent: one user turn of the loop; updates stream as
// the loop runs, a usage_update follows the loop's end, and the response
// carries the stop reason and the prompt's token usage (usage.go).
func (s *server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	x, err := s.get(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text, images, err := promptContent(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	if name, ok := agentCommand(text); ok {
		return s.swapAgent(ctx, x, name)
	}
	if args, ok := workflowCommand(text); ok {
		return s.runWorkflow(ctx, x, args)
	}
	if t, ok, err := expand(ctx, x.commands, text); err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": err.Error()})
	} else if ok {
		text = t
	}
	s.mu.Lock()
	for x.cancel != nil {
		done := x.done
		s.mu.Unlock()
		if resp, err, ok := s.steer(ctx, x, text, images, done); ok {
			return resp, err
		}
		s.mu.Lock() // the running prompt had ended its loop: this one runs after it
	}
	// The SDK cancels a session's running session/prompt when another one
	// arrives for it; that one steers this prompt instead (see steer), so
	// the loop runs detached from the request's cancellation and stops on
	// session/cancel (Cancel) or when the connection ends.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	x.cancel, x.done = cancel, done
	mode := x.mode
	s.mu.Unlock()
	x.s.SetMode(mode)
	res, err := x.s.Prompt(ctx, text, images...)
	stop := stopReason(res, err, ctx)
	s.mu.Lock()
	x.cancel, x.stop = nil, stop
	close(done)
	s.mu.Unlock()
	cancel()
	x.mapper.sendUsage() // before the response: the client has it when the prompt ends
	return sdk.PromptResponse{StopReason: stop, Usage: promptUsage(res)}, promptErr(err, ctx)
}

// steer handles a session/prompt sent while another prompt of the session
// runs: its text becomes a steering message of the running prompt
// (strata.Session.SteerRunning: it reaches the model before the loop's
// next model call, or in one more turn when the model was giving its final
// answer), echoed to the client as a user_message_chunk, and the request
// returns when the running prompt ends, with its stop reason (cancelled
// when this request is cancelled first). When the running prompt has
// already ended its loop, nothing is queued: steer waits for it to return
// and reports ok false, and the caller runs the text as the next prompt,
// so the message is neither lost nor sent twice. Images cannot steer: such
// a prompt is rejected with -32600 Invalid request naming the running
// prompt (docs/turn.md, rule 13).
func (s *server) steer(ctx context.Context, x *sess, text string, images []llm.Block, done <-chan struct{}) (_ sdk.PromptResponse, _ error, ok bool) {
	if len(images) > 0 {
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"sessionId": x.id(),
			"error": "a prompt is already running in this session and a prompt with images cannot join it as a steering message; send it after the running prompt ends, or session/cancel that one"}), true
	}
	steered := x.s.SteerRunning(text)
	if steered {
		x.mapper.send(sdk.UpdateUserMessageText(text))
	}
	select {
	case <-done:
		if !steered {
			return sdk.PromptResponse{}, nil, false
		}
		s.mu.Lock()
		stop := x.stop
		s.mu.Unlock()
		return sdk.PromptResponse{StopReason: stop}, nil, true
	case <-ctx.Done():
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil, true
	}
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
func (s *server) Cancel(_ context.Context, p sdk.CancelNotification) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, ok := s.sessions[string(p.SessionId)]; ok && x.cancel != nil {
		x.cancel()
	}
	return nil
}

// SetSessionMode implements acp.Agent: ask, allowlist or all.
func (s *server) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	x, err := s.get(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	m, err := sessionMode(p.ModeId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	s.mu.Lock()
	x.mode = m
	s.mu.Unlock()
	return sdk.SetSessionModeResponse{}, modeChanged(ctx, s.conn, p)
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
