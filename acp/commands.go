package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/mcp"
)

// PromptSource is a set of MCP servers whose prompts become the session's
// slash commands (available_commands_update). *mcp.Manager implements it.
type PromptSource interface {
	Statuses() []mcp.Status
	GetPrompts(ctx context.Context, server string) ([]mcp.Prompt, error)
	GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]llm.Message, error)
}

// command is one slash command: an MCP prompt of one server.
type command struct {
	src    PromptSource
	server string
	prompt mcp.Prompt
}

// listTimeout bounds listing the prompts of all servers of a session.
const listTimeout = 10 * time.Second

// commands lists the prompts of every running server of srcs. A command is
// named after its prompt, or "server___prompt" when two servers have a
// prompt of that name. Servers that fail to list are left out.
func commands(ctx context.Context, srcs []PromptSource) map[string]command {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var all []command
	count := map[string]int{}
	for _, src := range srcs {
		for _, st := range src.Statuses() {
			if st.State != mcp.Running {
				continue
			}
			ps, err := src.GetPrompts(ctx, st.Name)
			if err != nil {
				continue
			}
			for _, p := range ps {
				all = append(all, command{src: src, server: st.Name, prompt: p})
				count[p.Name]++
			}
		}
	}
	out := map[string]command{}
	for _, c := range all {
		name := c.prompt.Name
		if count[name] > 1 {
			name = c.server + "___" + name
		}
		out[name] = c
	}
	return out
}

// availableCommands is the available_commands_update of cmds, sorted by
// name, then the built-in /agent and /workflow; a command with arguments gets an input
// hint naming them.
func availableCommands(cmds map[string]command) sdk.SessionUpdate {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	slices.Sort(names)
	list := []sdk.AvailableCommand{}
	for _, n := range names {
		c := cmds[n]
		ac := sdk.AvailableCommand{Name: n, Description: fmt.Sprintf("MCP prompt %q of server %s", c.prompt.Name, c.server)}
		if c.prompt.Description != "" {
			ac.Description = c.prompt.Description + " (MCP prompt of " + c.server + ")"
		}
		if hint := argHint(c.prompt); hint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: hint}}
		}
		list = append(list, ac)
	}
	list = append(list, agentCommandEntry, workflowCommandEntry) // built in, after the MCP prompts (agentswap.go, workflowcmd.go)
	return sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{
		AvailableCommands: list, SessionUpdate: "available_commands_update"}}
}

// argHint names a prompt's arguments: the name of a single argument, else
// "name=…" pairs with optional ones in brackets.
func argHint(p mcp.Prompt) string {
	if len(p.Arguments) == 1 {
		return p.Arguments[0].Name
	}
	var parts []string
	for _, a := range p.Arguments {
		s := a.Name + "=…"
		if !a.Required {
			s = "[" + s + "]"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// expand turns a prompt text "/name input" that names a command into the
// text of the MCP prompt's messages; ok is false when text is not a
// command. A prompt with one argument takes the whole input; otherwise the
// input is name=value pairs separated by spaces. A missing required
// argument or a server error is an error naming it.
func expand(ctx context.Context, cmds map[string]command, text string) (string, bool, error) {
	name, input, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	c, ok := cmds[name]
	if !strings.HasPrefix(text, "/") || !ok {
		return "", false, nil
	}
	input = strings.TrimSpace(input)
	args := map[string]string{}
	if len(c.prompt.Arguments) == 1 && input != "" {
		args[c.prompt.Arguments[0].Name] = input
	} else {
		for _, f := range strings.Fields(input) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				return "", true, fmt.Errorf("/%s: argument %q is not name=value (arguments: %s)", name, f, argHint(c.prompt))
			}
			args[k] = v
		}
	}
	for _, a := range c.prompt.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return "", true, fmt.Errorf("/%s: missing required argument %q (arguments: %s)", name, a.Name, argHint(c.prompt))
		}
	}
	msgs, err := c.src.GetPrompt(ctx, c.server, c.prompt.Name, args)
	if err != nil {
		return "", true, fmt.Errorf("/%s: %w", name, err)
	}
	var parts []string
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == llm.BlockText {
				parts = append(parts, b.Text)
			}
		}
	}
	return strings.Join(parts, "\n\n"), true, nil
}
