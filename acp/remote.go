package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/remote"
)

// RemoteOptions configure ServeRemote.
type RemoteOptions struct {
	// Service runs the sessions (a *durable.Client: Temporal workers).
	Service remote.Service
	// Open starts a new session whose workspace is the client's cwd (an
	// absolute path the workers can open) in approval mode mode and
	// returns its id.
	Open func(ctx context.Context, cwd string, mode agent.Mode) (string, error)
	// Load, when set, continues the stored session id (in the workers'
	// store) with its workspace at cwd in approval mode mode: ACP
	// session/load. It fails when the session cannot be started; a session
	// the store lacks fails when its history is read.
	Load func(ctx context.Context, id, cwd string, mode agent.Mode) error
	// Mode is the approval mode of new sessions.
	Mode agent.Mode
	// KiroDialect is ServeOptions.KiroDialect.
	KiroDialect bool
}

// ServeRemote serves ACP on the client's streams, as ServeWith does, for
// sessions that run elsewhere ('strata acp --temporal': session workflows
// on Temporal workers, docs/durable.md). It supports initialize,
// authenticate, session/new, session/prompt (updates stream as the
// session's events arrive; approvals go to the client as
// session/request_permission; a prompt sent while another runs steers it)
// session/load when RemoteOptions.Load is set (the stored conversation is
// replayed to the client as updates, then the session goes on), and
// session/cancel, which ends the session's workflow once its running
// prompt is over (a remote prompt cannot be stopped mid-way). Not over
// Temporal: MCP servers passed by the client (the workers run the
// workspace's), fs and terminal methods of the client. session/set_mode
// sets the mode of the session's next prompts. Each prompt ends with a
// usage_update read from the session's events (remote.Usage). A prompt with
// images cannot steer (-32600), as in process. When the
// connection ends every session's workflow is ended.
func ServeRemote(ctx context.Context, o RemoteOptions, in io.Reader, out io.Writer) error {
	if o.Service == nil || o.Open == nil {
		return errors.New("acp: ServeRemote needs RemoteOptions.Service and Open")
	}
	s := &remoteServer{o: o, sessions: map[string]*remoteSess{}}
	s.out = &lockedWriter{w: out}
	s.conn = sdk.NewAgentSideConnection(s, s.out, filterLines(in, s.out))
	var err error
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[string]*remoteSess{}
	s.mu.Unlock()
	for id := range all {
		_ = o.Service.End(context.WithoutCancel(ctx), id)
	}
	return err
}

// remoteServer is ServeRemote's ACP agent.
type remoteServer struct {
	unadvertised
	o    RemoteOptions
	conn *sdk.AgentSideConnection
	out  *lockedWriter

	mu       sync.Mutex
	sessions map[string]*remoteSess
	dialect  dialect
}

// remoteSess is one remote session: its driver (one prompt at a time) and
// the updates mapper.
type remoteSess struct {
	drive  remote.Session
	mapper *mapper
	steer  chan string   // a running prompt's steering lines
	done   chan struct{} // closed when the running prompt ends; nil when none runs
	stop   sdk.StopReason
}

// Initialize implements acp.Agent: protocol version 1, session loading
// when RemoteOptions.Load is set, text, embedded text resources and
// images in prompts.
func (s *remoteServer) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.mu.Lock()
	s.dialect = dialectOf(p.ClientCapabilities)
	if s.o.KiroDialect {
		s.dialect = dialect{toolChunks: true}
	}
	s.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentInfo:       &sdk.Implementation{Name: "strata", Version: "0.1"},
		AuthMethods:     []sdk.AuthMethod{},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        s.o.Load != nil,
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			Meta:               agentMeta(),
		},
	}, nil
}

// Authenticate implements acp.Agent: nothing to authenticate (the workers
// hold the provider keys).
func (s *remoteServer) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession implements acp.Agent: a new remote session in cwd.
func (s *remoteServer) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	if len(p.McpServers) > 0 {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(map[string]any{"mcpServers": len(p.McpServers),
			"error": "strata acp --temporal runs the workspace's MCP servers on the workers; a client's MCP servers cannot join"})
	}
	id, err := s.o.Open(ctx, p.Cwd, s.o.Mode)
	if err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	s.add(id)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(id), Modes: &sdk.SessionModeState{
		AvailableModes: modes, CurrentModeId: sdk.SessionModeId(s.o.Mode)}}, nil
}

// add serves the remote session id on this connection.
func (s *remoteServer) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &mapper{conn: s.conn, session: sdk.SessionId(id), dialect: s.dialect}
	use := &remote.Usage{} // the usage_update, read from the session's events
	m.report = func() strata.UsageReport {
		r := use.Report()
		return strata.UsageReport{Context: r.Context, Window: r.Window, CostUSD: r.CostUSD, Priced: r.Priced}
	}
	x := &remoteSess{mapper: m}
	x.drive = remote.Session{Service: s.o.Service, ID: id, Observe: func(e event.Event) { use.Observe(e); m.observe(e) },
		Approver: &permission{conn: s.conn, session: sdk.SessionId(id)}}
	s.sessions[id] = x
}

// LoadSession implements acp.AgentLoader: the session of the workers'
// store goes on in a session workflow, its conversation replayed to the
// client as updates first (as the in-process server does). Without
// RemoteOptions.Load it is method-not-found.
func (s *remoteServer) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if s.o.Load == nil {
		return sdk.LoadSessionResponse{}, sdk.NewMethodNotFound("session/load")
	}
	id := string(p.SessionId)
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if len(p.McpServers) > 0 {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"mcpServers": len(p.McpServers),
			"error": "strata acp --temporal runs the workspace's MCP servers on the workers; a client's MCP servers cannot join"})
	}
	if err := s.o.Load(ctx, id, p.Cwd, s.o.Mode); err != nil {
		return sdk.LoadSessionResponse{}, sdk.NewInternalError(map[string]any{"sessionId": id, "error": err.Error()})
	}
	history, err := s.o.Service.History(ctx, id)
	if err != nil {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"sessionId": id, "error": err.Error()})
	}
	for _, u := range historyUpdates(history) {
		if err := s.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	s.add(id)
	return sdk.LoadSessionResponse{Modes: modeState(s.o.Mode)}, nil
}

// get returns the session id names.
func (s *remoteServer) get(id sdk.SessionId) (*remoteSess, error) { return lookup(&s.mu, s.sessions, id) }

// Prompt implements acp.Agent: one prompt of the remote session; a prompt
// sent while another runs steers it and returns with its stop reason.
func (s *remoteServer) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	x, err := s.get(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text, images, err := promptContent(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	s.mu.Lock()
	for x.done != nil {
		done, steer := x.done, x.steer
		s.mu.Unlock()
		if len(images) > 0 {
			return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"sessionId": string(p.SessionId),
				"error": "a prompt is already running in this session and a prompt with images cannot join it as a steering message; send it after the running prompt ends"})
		}
		select {
		case steer <- text:
			x.mapper.send(sdk.UpdateUserMessageText(text))
			<-done
			s.mu.Lock()
			stop := x.stop
			s.mu.Unlock()
			return sdk.PromptResponse{StopReason: stop}, nil
		case <-done:
			// The running prompt ended first: this one runs after it.
		}
		s.mu.Lock()
	}
	x.done, x.steer = make(chan struct{}), make(chan string)
	done := x.done
	s.mu.Unlock()
	// The prompt runs on the workers whatever happens to this request (the
	// SDK cancels it when another prompt of the session arrives).
	res, perr := x.drive.PromptWith(context.WithoutCancel(ctx), text, images, x.steer)
	x.mapper.sendUsage() // before the response, as in process
	stop := stopReason(res, perr, context.Background())
	s.mu.Lock()
	x.stop, x.done = stop, nil
	close(done)
	s.mu.Unlock()
	return sdk.PromptResponse{StopReason: stop, Usage: promptUsage(res)}, promptErr(perr, context.Background())
}

// Cancel implements acp.Agent: the session's workflow ends once its
// running prompt is over (the prompt itself runs to its end on the
// workers).
func (s *remoteServer) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	if _, err := s.get(p.SessionId); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.sessions, string(p.SessionId))
	s.mu.Unlock()
	if err := s.o.Service.End(context.WithoutCancel(ctx), string(p.SessionId)); err != nil {
		return sdk.NewInternalError(map[string]any{"error": fmt.Sprintf("ending session %s: %v", p.SessionId, err)})
	}
	return nil
}

// SetSessionMode implements acp.Agent: ask, allowlist or all, for the
// session's next prompts (the workflow's mode update).
func (s *remoteServer) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	if _, err := s.get(p.SessionId); err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	m, err := sessionMode(p.ModeId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	if err := s.o.Service.SetMode(ctx, string(p.SessionId), m); err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.SetSessionModeResponse{}, modeChanged(ctx, s.conn, p)
}
