//go:build !linux

package tool

import "syscall"

// bashProcAttr puts execute_bash's shell in its own process group, so a
// timeout kills the whole group. (Only Linux can also tie its life to
// strata's.)
func bashProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
