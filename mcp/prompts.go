package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/strata-agent/strata/llm"
)

// Prompt is one prompt a server offers (an entry of prompts/list), in
// strata's own form: the fields strata shows and checks, nothing of the
// SDK's. ACP turns prompts into slash commands.
type Prompt struct {
	// Name identifies the prompt to GetPrompt.
	Name string
	// Title is the human-readable display name ("" when the server gave
	// none; show Name then).
	Title string
	// Description says what the prompt provides ("" when none).
	Description string
	// Arguments are the prompt's template arguments, in the server's order.
	Arguments []PromptArgument
}

// PromptArgument is one template argument of a Prompt.
type PromptArgument struct {
	// Name is the key of the argument in GetPrompt's args.
	Name string
	// Description says what the argument is ("" when none).
	Description string
	// Required arguments must be given to GetPrompt (the server rejects the
	// call otherwise).
	Required bool
}

// GetPrompts lists server's prompts (prompts/list, all pages) in the
// server's order, within the server's timeout. Errors: ErrNotRunning when
// the server is not running or its connection broke (it is then marked
// Crashed), a timeout error naming the server, or the server's error.
func (m *Manager) GetPrompts(ctx context.Context, server string) ([]Prompt, error) {
	s, sess, err := m.running(server)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	var out []Prompt
	for p, err := range sess.Prompts(ctx, nil) {
		if err != nil {
			return nil, m.failed(s, sess, "prompts/list", err)
		}
		out = append(out, prompt(p))
	}
	return out, nil
}

// prompt converts the SDK's prompt to strata's (nil arguments skipped).
func prompt(p *sdk.Prompt) Prompt {
	out := Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		if a != nil {
			out.Arguments = append(out.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
	}
	return out
}

// GetPrompt renders server's prompt name with args as messages (prompts/get),
// within the server's timeout: role "assistant" becomes llm.RoleAssistant,
// any other llm.RoleUser; text and image content become such blocks, other
// content (audio, resources) its JSON text. Errors as for GetPrompts.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]llm.Message, error) {
	s, sess, err := m.running(server)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	r, err := sess.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, m.failed(s, sess, "prompts/get "+name, err)
	}
	var out []llm.Message
	for _, pm := range r.Messages {
		role := llm.RoleUser
		if pm.Role == "assistant" {
			role = llm.RoleAssistant
		}
		out = append(out, llm.Message{Role: role, Content: blocks([]sdk.Content{pm.Content})})
	}
	return out, nil
}
