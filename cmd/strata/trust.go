package main

import (
	"context"
	"fmt"
	"github.com/strata-agent/strata/trust"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// trustHelp is the help of --trust.
const trustHelp = "run this workspace's hooks and MCP server commands, as they are when strata starts, without asking; " +
	"the decision is remembered (in the user's config dir) until a command or permission changes; an agent file written " +
	"or changed during the run is asked about again (refused without a terminal). Without it strata shows new commands and asks on a terminal, " +
	"and refuses to run them otherwise"

// cliTrust is the trust policy of every command that runs a workspace's
// hooks or MCP servers: what the user trusted before (trust.Store in
// the user's config dir) runs; new or changed commands are listed on stderr
// and trusted with --trust, or by answering y on a terminal, else refused
// with an error naming --trust.
func cliTrust(flag bool) trust.Func {
	store, err := trust.DefaultStore()
	if err != nil {
		return func(context.Context, trust.Request) error {
			if flag {
				return nil
			}
			return fmt.Errorf("%w (trust the workspace for this run with --trust)", err)
		}
	}
	return trust.Remembered(store, func(ctx context.Context, r trust.Request) (bool, error) {
		showTrust(os.Stderr, r)
		if flag && !r.Changed {
			fmt.Fprintf(os.Stderr, "strata: trusted with --trust (remembered in %s)\n", store.Path)
			return true, nil
		}
		if !isTerminal(os.Stdin) {
			if r.Changed {
				return false, fmt.Errorf("the agent file %s is new or its commands or permissions changed after strata started "+
					"(written during the run, possibly by the model); --trust covers only what was there at start and stdin is not "+
					"a terminal to ask on: check the file, then start strata again", r.Agent)
			}
			return false, fmt.Errorf("these %d command(s) were never trusted in %s and stdin is not a terminal to ask on: "+
				"check them, then run again with --trust (the decision is remembered until a command changes)", len(r.Commands), r.Dir)
		}
		fmt.Fprint(os.Stderr, "? trust this workspace and run them  [y] yes  [N] no: ")
		line, err := readLine(os.Stdin)
		if err != nil {
			return false, fmt.Errorf("reading the answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		}
		return false, fmt.Errorf("not trusted: none of the %d command(s) ran (run again with --trust to trust them)", len(r.Commands))
	})
}

// showTrust lists the commands of r, each with the file it comes from, and
// the agent file's permissions when it changed during the run.
func showTrust(w io.Writer, r trust.Request) {
	if r.Changed {
		fmt.Fprintf(w, "strata: the agent file %s changed after strata started (new or rewritten during the run, possibly by the model)\n", printable(r.Agent))
		if r.Permissions != "" {
			fmt.Fprintf(w, "  permissions: %s\n", printable(r.Permissions))
		}
	}
	fmt.Fprintf(w, "strata: the workspace %s would run these commands (new, or changed since it was trusted):\n", printable(r.Dir))
	for _, c := range r.Commands {
		src := c.Source
		if rel, err := filepath.Rel(r.Dir, src); err == nil && !strings.HasPrefix(rel, "..") {
			src = rel
		}
		fmt.Fprintf(w, "  %s\n      from %s\n", c, printable(src))
	}
}

// printable returns s, Go-quoted when it holds a character that is not
// printable (an escape sequence in a path could hide what follows it).
func printable(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
		return strconv.Quote(s)
	}
	return s
}

// readLine reads up to a newline one byte at a time, so that nothing after
// the answer is taken from a stdin other readers use later.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return b.String(), nil
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			if err == io.EOF && b.Len() > 0 {
				return b.String(), nil
			}
			return b.String(), err
		}
	}
}
