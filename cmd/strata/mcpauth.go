package main

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/strata-agent/strata/agentfile"
	"github.com/strata-agent/strata/trust"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/mcp/oauth"
)

// authTimeout bounds `strata mcp auth`: the time a person has to log in in
// the browser (a server's own timeout bounds the automatic flow).
const authTimeout = 10 * time.Minute

// mcpOAuthOptions are the MCP OAuth options of the CLI (docs/mcp-auth.md):
// tokens in oauth.DefaultDir; the browser step from STRATA_MCP_AUTH_BROWSER
// (open, print, headless, off), else the system browser when a person is at
// a terminal (interactive) and off when not; strata's client ID metadata
// document URL from STRATA_MCP_CLIENT_METADATA_URL. Errors name the bad
// variable.
func mcpOAuthOptions(interactive bool) (mcp.OAuthOptions, error) {
	dir, err := oauth.DefaultDir()
	if err != nil {
		return mcp.OAuthOptions{}, err
	}
	b := oauth.Off
	if interactive {
		b = oauth.Open
	}
	if v := os.Getenv("STRATA_MCP_AUTH_BROWSER"); v != "" {
		if b, err = oauth.ParseBrowser(v); err != nil {
			return mcp.OAuthOptions{}, usagef("STRATA_MCP_AUTH_BROWSER: %v", err)
		}
	}
	cimd := os.Getenv("STRATA_MCP_CLIENT_METADATA_URL")
	if u, err := url.Parse(cimd); cimd != "" && (err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "") {
		return mcp.OAuthOptions{}, usagef("STRATA_MCP_CLIENT_METADATA_URL %q: a client ID metadata document URL is an https URL with a path (https://example.com/strata.json)", cimd)
	}
	return mcp.OAuthOptions{Store: oauth.Store{Dir: dir}, Browser: b, Out: os.Stderr, ClientMetadataURL: cimd}, nil
}

// cliElicitor puts MCP elicitation forms to the person: on the terminal
// when why is "", else declined with a warning saying why.
// STRATA_ELICIT=defaults accepts every form with its defaults and
// STRATA_ELICIT=decline declines them all (docs/mcp-auth.md, "Elicitation").
func cliElicitor(why string) mcp.Elicitor {
	switch os.Getenv("STRATA_ELICIT") {
	case "defaults":
		return mcp.AcceptDefaults
	case "decline":
		return mcp.Decline(warn, "STRATA_ELICIT=decline")
	}
	if why == "" {
		return mcp.LinePrompt{In: bufio.NewReader(os.Stdin), Out: os.Stderr}
	}
	return mcp.Decline(warn, why+"; STRATA_ELICIT=defaults accepts the form's defaults")
}

func newMCPAuthCmd() *cobra.Command {
	var agentFile, mcpFile string
	var trustFlag bool
	cmd := &cobra.Command{
		Use:   "auth SERVER",
		Short: "Authorize strata for a remote MCP server (OAuth) and store the token",
		Long: `Run MCP authorization for SERVER (a URL server of the agent run would load, or of
--mcp-config FILE): strata connects, and when the server answers 401 it discovers the
authorization server, registers (or uses the oauth object's clientId, or its client ID
metadata document), opens your browser (STRATA_MCP_AUTH_BROWSER=print only prints the URL)
and waits on a loopback redirect listener. The token is stored, 0600, in the user's config
directory (strata/mcp-oauth/) and refreshed when it expires; run and chat do the same
automatically when a server answers 401. A stored token is replaced. See docs/mcp-auth.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return mcpAuth(cmd.Context(), args[0], agentFile, mcpFile, trustFlag)
		},
	}
	cmd.Flags().StringVar(&agentFile, "agent", "", agentHelp)
	cmd.Flags().StringVar(&mcpFile, "mcp-config", "", "a Claude-Desktop-style mcp.json (without --agent)")
	cmd.Flags().BoolVar(&trustFlag, "trust", false, trustHelp)
	return cmd
}

func newMCPLogoutCmd() *cobra.Command {
	var agentFile, mcpFile string
	cmd := &cobra.Command{
		Use:   "logout SERVER",
		Short: "Delete the stored OAuth token of a remote MCP server",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := remoteServer(args[0], agentFile, mcpFile)
			if err != nil {
				return err
			}
			store, err := tokenStore()
			if err != nil {
				return err
			}
			ok, err := store.Delete(s.Server.URL)
			if err != nil {
				return err
			}
			if !ok {
				fmt.Printf("no stored token for %s (%s)\n", s.Name, s.Server.URL)
				return nil
			}
			fmt.Printf("deleted the stored token for %s (%s)\n", s.Name, s.Server.URL)
			return nil
		},
	}
	cmd.Flags().StringVar(&agentFile, "agent", "", agentHelp)
	cmd.Flags().StringVar(&mcpFile, "mcp-config", "", "a Claude-Desktop-style mcp.json (without --agent)")
	return cmd
}

func tokenStore() (oauth.Store, error) {
	dir, err := oauth.DefaultDir()
	return oauth.Store{Dir: dir}, err
}

// remoteServer finds the URL server named name among the servers `mcp
// list` would start.
func remoteServer(name, agentFile, mcpFile string) (config.NamedMCPServer, error) {
	wd, err := os.Getwd()
	if err != nil {
		return config.NamedMCPServer{}, err
	}
	servers, _, err := mcpServers(wd, agentFile, mcpFile)
	if err != nil {
		return config.NamedMCPServer{}, err
	}
	var names []string
	for _, s := range servers {
		if s.Name == name {
			if s.Server.URL == "" {
				return s, usagef("MCP server %q (%s) is a local command, not a URL server: it has no OAuth", name, s.Source)
			}
			return s, nil
		}
		names = append(names, s.Name)
	}
	return config.NamedMCPServer{}, usagef("no MCP server %q here (servers: %v); pass --agent or --mcp-config", name, names)
}

func mcpAuth(ctx context.Context, name, agentFile, mcpFile string, trustFlag bool) error {
	s, err := remoteServer(name, agentFile, mcpFile)
	if err != nil {
		return err
	}
	wd, _ := os.Getwd()
	if err := trust.Check(ctx, cliTrust(trustFlag), trust.NewRequest(wd, "", nil, []config.NamedMCPServer{s})); err != nil {
		return cliError(err)
	}
	o, err := mcpOAuthOptions(true)
	if err != nil {
		return err
	}
	if _, err := o.Store.Delete(s.Server.URL); err != nil {
		return err
	}
	cfg := agentfile.MCPServerConfig(s.Server)
	cfg.Timeout = authTimeout
	m := mcp.NewManager(mcp.Options{Roots: []string{wd}, Stderr: logs.fileWriter(), OAuth: o})
	defer m.Terminate()
	if err := m.LaunchServer(ctx, s.Name, cfg); err != nil {
		return err
	}
	if r, err := o.Store.Load(s.Server.URL); err != nil || r == nil {
		fmt.Printf("%s (%s) did not ask for authorization: it answered without a token\n", s.Name, s.Server.URL)
		return err
	}
	fmt.Printf("authorized for %s (%s); token stored in %s\n", s.Name, s.Server.URL, o.Store.Path(s.Server.URL))
	return nil
}
