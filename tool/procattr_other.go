//go:build !linux

package tool

import "syscall"

// bashProcAttr puts execute_bash's shell in its own process group, so a
// timeout kills the whole group. (Only Linux can also tie the shell's life
// to strata's; elsewhere the groupGuard alone kills the group, shell
// included, when strata dies.)
func bashProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
