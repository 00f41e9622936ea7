package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"

	"github.com/spf13/cobra"
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
					flushTelemetry()
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

// interruptedError is how drive ends a run that SIGINT cancelled: it names
// the session the run was in, so the hint resumes exactly that one.
type interruptedError struct {
	session string
	err     error
	hint    string // what to do next, when not 'strata sessions resume SESSION' (--temporal)
}

func (e *interruptedError) Error() string { return e.err.Error() }
func (e *interruptedError) Unwrap() error { return e.err }

// interrupted reports whether err ends a command that SIGINT stopped; if so
// it prints how to resume the session the command ran on stderr.
func (w *interruptWatch) interrupted(err error, stderr io.Writer) bool {
	w.stop()
	var ie *interruptedError
	if !w.got.Load() || !errors.As(err, &ie) {
		return false
	}
	fmt.Fprintln(stderr, "strata: interrupted")
	if ie.hint != "" {
		fmt.Fprintln(stderr, ie.hint)
		return true
	}
	fmt.Fprintf(stderr, "resume with: strata sessions resume %s\n", ie.session)
	return true
}
