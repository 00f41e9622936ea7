package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata/agent"
)

// unadvertised answers "method not found" for the session methods neither
// server advertises (CloseSession, ListSessions, ResumeSession — the
// in-process server has session/load — and SetSessionConfigOption); both
// servers embed it.
type unadvertised struct{}

// CloseSession is not supported.
func (unadvertised) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionClose)
}

// ListSessions is not supported.
func (unadvertised) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

// ResumeSession is not supported.
func (unadvertised) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// SetSessionConfigOption is not supported.
func (unadvertised) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

// sessionMode is session/set_mode's modeId as an approval mode: ask,
// allowlist or all, else an invalid-params error listing them.
func sessionMode(id sdk.SessionModeId) (agent.Mode, error) {
	m := agent.Mode(id)
	if m != agent.ModeAsk && m != agent.ModeAllowlist && m != agent.ModeAll {
		return "", sdk.NewInvalidParams(map[string]any{"modeId": string(id), "valid": []string{"ask", "allowlist", "all"}})
	}
	return m, nil
}

// modeChanged tells the client the session's mode is now p's
// (current_mode_update).
func modeChanged(ctx context.Context, conn *sdk.AgentSideConnection, p sdk.SetSessionModeRequest) error {
	return conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId,
		Update: sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: p.ModeId, SessionUpdate: "current_mode_update"}}})
}
