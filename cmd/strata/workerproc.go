package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// workerReadyTimeout bounds how long a started 'strata worker' may take to
// say that it polls its task queue.
const workerReadyTimeout = 60 * time.Second

// workerProc is a 'strata worker' child process: 'strata bench temporal'
// starts its workers this way, and the Temporal integration tests start and
// SIGKILL them.
type workerProc struct {
	name   string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // its Wait error, set before exited closes
}

// startWorker runs `binary worker ARGS…` in dir with environment env (nil =
// this process's) and waits until it polls its task queue. It fails with
// the worker's stderr when the worker exits or does not get ready within
// workerReadyTimeout.
func startWorker(binary, dir, name string, env []string, args ...string) (*workerProc, error) {
	cmd := exec.Command(binary, append([]string{"worker"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	// The worker dies with this process: a crashed test or bench leaves
	// no worker polling the queue.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	w := &workerProc{name: name, cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting worker %s (%s): %w", name, binary, err)
	}
	go func() {
		w.err = cmd.Wait()
		close(w.exited)
	}()
	deadline := time.After(workerReadyTimeout)
	for !strings.Contains(w.stderr.String(), "worker polling") {
		select {
		case <-w.exited:
			return nil, fmt.Errorf("worker %s exited (%v) before polling; its stderr:\n%s", name, w.err, w.stderr)
		case <-deadline:
			w.kill(syscall.SIGKILL)
			return nil, fmt.Errorf("worker %s not polling after %s; its stderr:\n%s", name, workerReadyTimeout, w.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return w, nil
}

// kill sends sig to the worker and waits (up to 30 s: a SIGTERM lets
// running activities end) until it has exited.
func (w *workerProc) kill(sig syscall.Signal) {
	_ = w.cmd.Process.Signal(sig)
	select {
	case <-w.exited:
	case <-time.After(30 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
	}
}

// pid is the worker's process id.
func (w *workerProc) pid() int { return w.cmd.Process.Pid }

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// envWith returns this process's environment plus kv (later entries win).
func envWith(kv ...string) []string { return append(os.Environ(), kv...) }
