package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/session"
)

// exitInterrupted is the exit status of a run or chat stopped by Ctrl-C
// (SIGINT): 128 + 2, as shells report a process killed by SIGINT.
const exitInterrupted = 130

// interruptible names the commands that stop their loop on Ctrl-C and leave
// a resumable session behind (they run through drive).
var interruptible = map[string]bool{"strata run": true, "strata chat": true,
	"strata sessions resume": true, "strata sessions branch": true}

// interruptWatch records whether SIGINT arrived while an interruptible
// command ran (drive cancels the loop's context on it). A second SIGINT
// exits at once with exitInterrupted, in case the loop does not stop.
type interruptWatch struct {
	got  atomic.Bool
	stop func()
}

// watchInterrupt starts watching SIGINT when c is interruptible; otherwise
// it returns a watch that never fires (the default SIGINT action stays).
func watchInterrupt(c *cobra.Command) *interruptWatch {
	w := &interruptWatch{stop: func() {}}
	if c == nil || !interruptible[c.CommandPath()] {
		return w
	}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				if w.got.Swap(true) {
					os.Exit(exitInterrupted)
				}
			case <-done:
				return
			}
		}
	}()
	w.stop = func() { signal.Stop(ch); close(done) }
	return w
}

// interrupted reports whether err ends a command that SIGINT stopped; if so
// it prints how to resume the session on stderr (the latest session of the
// command's database, in this directory for run and chat).
func (w *interruptWatch) interrupted(ctx context.Context, c *cobra.Command, err error, stderr io.Writer) bool {
	w.stop()
	if !w.got.Load() || err == nil || !errors.Is(err, context.Canceled) {
		return false
	}
	fmt.Fprintln(stderr, "strata: interrupted")
	if id := lastSession(ctx, c); id != "" {
		fmt.Fprintf(stderr, "resume with: strata sessions resume %s\n", id)
	}
	return true
}

// lastSession returns the id of the session most recently updated in c's
// session database (--db), in the working directory for run and chat; ""
// when it cannot tell.
func lastSession(ctx context.Context, c *cobra.Command) string {
	db := ""
	if fl := c.Flags().Lookup("db"); fl != nil {
		db = fl.Value.String()
	}
	st, err := openStore(db)
	if err != nil {
		return ""
	}
	defer st.Close()
	opts := session.ListOptions{Limit: 1}
	if c.Name() == "run" || c.Name() == "chat" {
		opts.Cwd, _ = os.Getwd()
	}
	ss, err := st.ListSessions(ctx, opts)
	if err != nil || len(ss) == 0 {
		return ""
	}
	return ss[0].ID
}
