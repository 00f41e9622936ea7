package tool

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// groupGuardScript is the guard's program. It reads its standard input, the
// read end of a pipe whose only write end strata holds: first the process
// group to watch (end of file instead: nothing was started, exit), then it
// waits. A second line means strata ended the command itself: exit. End of
// file means strata died (the kernel closes a dead process's descriptors,
// SIGKILL included): kill the group.
const groupGuardScript = `read -r pg || exit 0; read -r _ && exit 0; kill -KILL -- "-$pg" 2>/dev/null; exit 0`

// groupGuard kills a command's process group when strata dies before the
// command ends. Pdeathsig (procattr_linux.go) reaches only the direct
// shell, and no code of a SIGKILLed process runs; so a small process of its
// own — `bash -c groupGuardScript`, in a process group of its own, not
// tied to strata's life — watches a pipe and kills the group when strata's
// end closes. Without it, background jobs and grandchildren of a command
// that was running when strata crashed would go on running, and could run
// again when the session is resumed.
//
// The guard starts before the command, so a command never runs unguarded
// because a guard could not start. Limits: a process that leaves the group
// (setsid, setpgid) is beyond its reach, as it is beyond killGroup's; strata
// dying in the instant between starting the command and handing the guard
// its group leaves the shell's first children unguarded (the shell itself
// still gets Pdeathsig on Linux).
type groupGuard struct {
	cmd     *exec.Cmd
	w       *os.File // strata's end of the pipe
	watched bool     // the guard has its group
}

// startGroupGuard starts a guard; watch hands it the group to guard.
func startGroupGuard() (*groupGuard, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return nil, fmt.Errorf("process group guard: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("bash", "-c", groupGuardScript, "strata-execute-bash-guard")
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // outside the command's group and the terminal's
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("process group guard: %w", err)
	}
	return &groupGuard{cmd: cmd, w: w}, nil
}

// watch hands the guard the process group pgid (a command's pid under
// Setpgid). An error means the guard is gone and the group unguarded.
func (g *groupGuard) watch(pgid int) error {
	if _, err := g.w.WriteString(strconv.Itoa(pgid) + "\n"); err != nil {
		return fmt.Errorf("process group guard: %w", err)
	}
	g.watched = true
	return nil
}

// release tells the guard the command ended or never started (strata kills
// the group itself) and waits for it to exit.
func (g *groupGuard) release() {
	if g.watched {
		_, _ = g.w.WriteString("done\n")
	}
	_ = g.w.Close()
	_ = g.cmd.Wait()
}
