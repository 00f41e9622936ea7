package tool

import "syscall"

// bashProcAttr puts execute_bash's shell in its own process group (so a
// timeout kills the whole group) and, on Linux, has the kernel kill it when
// strata dies (Pdeathsig), so a crashed or SIGKILLed strata leaves no shell
// running a tool call. Pdeathsig reaches the shell only; the rest of its
// group (background jobs, grandchildren) is killed by the groupGuard.
func bashProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
