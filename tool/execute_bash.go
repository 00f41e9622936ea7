package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/strata-agent/strata/llm"
)

//go:embed execute_bash.md
var executeBashDescription string

// Limits of execute_bash; the ExecuteBash fields override them when non-zero.
const (
	// DefaultBashTimeout bounds one command. kiro's execute_bash input has
	// no timeout field, and strata keeps kiro's schema exactly, so the
	// timeout is a setting (ExecuteBash.Timeout), not an input.
	DefaultBashTimeout = 120 * time.Second
	// DefaultBashMaxOutput caps the output in a result (bytes): stdout keeps
	// two thirds and stderr one third, each its head and tail, with a notice
	// saying how many bytes were cut.
	DefaultBashMaxOutput = 30_000
	// bashWaitDelay bounds the wait for output pipes that a process outside
	// the command's process group keeps open after the command ends.
	bashWaitDelay = time.Second
)

// ExecuteBash is kiro's execute_bash tool (input schema
// specs/execute_bash.json, unchanged from kiro: command and summary). The
// zero value uses the Default* limits.
type ExecuteBash struct {
	Timeout   time.Duration // per command; 0 = DefaultBashTimeout
	MaxOutput int           // result bytes of stdout+stderr; 0 = DefaultBashMaxOutput
}

// Spec returns execute_bash's spec: kiro's input schema, execute_bash.md as
// description.
func (*ExecuteBash) Spec() llm.ToolSpec { return cachedSpec("execute_bash", executeBashDescription) }

// Run refuses a command Env.DeniedCommands match (see CommandAllowed;
// AllowedCommands only decide what runs without prompting, before Run),
// then runs it with `bash -c` in the workspace root,
// in a process group of its own, with standard input empty; a guard process
// (groupGuard) kills that group if strata dies first. Each output line
// goes to Env.Progress as it arrives. With Env.Terminal set, the command runs
// in the client's terminal instead (see inTerminal).
//
// The result text starts with "exit status: N", then the captured stdout and
// stderr under "--- stdout ---" / "--- stderr ---" (sections that are empty
// are left out). A non-zero exit status is not an error (kiro reports it in
// its result too): the model reads it. When the command ends, the rest of its
// process group (background jobs) is killed. A refused command, a timeout and
// a cancelled ctx are errors; on timeout or cancellation the whole process
// group is killed with SIGKILL and the output so far is included.
func (t *ExecuteBash) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("execute_bash: input: %w", err)
	}
	if strings.TrimSpace(in.Command) == "" {
		return Result{}, errors.New("execute_bash: command is empty")
	}
	if err := CommandAllowed(env, in.Command); err != nil {
		return Result{}, err
	}
	root, err := workspaceRoot(env)
	if err != nil {
		return Result{}, fmt.Errorf("execute_bash: %w", err)
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultBashTimeout
	}
	limit := orDefault(t.MaxOutput, DefaultBashMaxOutput)
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if env != nil && env.Terminal != nil {
		return inTerminal(ctx, runCtx, env, in.Command, mustReal(root), limit, timeout)
	}

	cmd := exec.CommandContext(runCtx, "bash", "-c", in.Command)
	cmd.Dir = mustReal(root)
	cmd.Env = append(os.Environ(), "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	cmd.SysProcAttr = bashProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = bashWaitDelay
	var progMu sync.Mutex
	stdout := newCapture(limit*2/3, env, &progMu)
	stderr := newCapture(limit-limit*2/3, env, &progMu)
	cmd.Stdout, cmd.Stderr = stdout, stderr

	guard, err := startGroupGuard()
	if err != nil {
		return Result{}, fmt.Errorf("execute_bash: cannot guard the command: %w", err)
	}
	defer guard.release()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("execute_bash: cannot start bash: %w", err)
	}
	if err := guard.watch(cmd.Process.Pid); err != nil {
		_ = killGroup(cmd.Process)
		_ = cmd.Wait()
		return Result{}, fmt.Errorf("execute_bash: command killed at its start, as nothing would kill it if strata died: %w", err)
	}
	waitErr := cmd.Wait()
	_ = killGroup(cmd.Process) // background jobs the command left behind
	took := time.Since(start).Round(time.Millisecond)
	stdout.flush()
	stderr.flush()

	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return Result{Content: []llm.Block{llm.TextBlock(formatOutput("none (killed)", stdout, stderr))}},
			fmt.Errorf("execute_bash: command timed out after %s and was killed", timeout)
	case ctx.Err() != nil:
		return Result{Content: []llm.Block{llm.TextBlock(formatOutput("none (killed)", stdout, stderr))}},
			fmt.Errorf("execute_bash: command cancelled after %s and killed: %w", took, ctx.Err())
	}
	status := "0"
	var exitErr *exec.ExitError
	switch {
	case errors.As(waitErr, &exitErr):
		status = strconv.Itoa(exitErr.ExitCode())
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = "none (killed by signal: " + ws.Signal().String() + ")"
		}
	case errors.Is(waitErr, exec.ErrWaitDelay):
		// The command finished but something outside its process group
		// held the output open; the output read so far is reported.
	case waitErr != nil:
		return Result{}, fmt.Errorf("execute_bash: %w", waitErr)
	}
	return TextResult(formatOutput(status, stdout, stderr)), nil
}

// inTerminal runs command through env.Terminal; the result has the same
// shape as a local run, with one "--- output ---" section (a terminal
// interleaves stdout and stderr).
func inTerminal(ctx, runCtx context.Context, env *Env, command, dir string, limit int, timeout time.Duration) (Result, error) {
	r, err := env.Terminal.Run(runCtx, env.CallID, command, dir, limit)
	var b strings.Builder
	status := "none (killed)"
	switch {
	case r.ExitCode != nil:
		status = strconv.Itoa(*r.ExitCode)
	case r.Signal != "":
		status = "none (killed by signal: " + r.Signal + ")"
	}
	b.WriteString("exit status: " + status + "\n")
	if r.Truncated {
		b.WriteString(fmt.Sprintf("[the terminal kept only the last %d bytes of output]\n", limit))
	}
	if out := strings.TrimSuffix(r.Output, "\n"); out != "" {
		b.WriteString("--- output ---\n" + out)
	} else {
		b.WriteString("(no output)")
	}
	res := TextResult(b.String())
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return res, fmt.Errorf("execute_bash: command timed out after %s and was killed", timeout)
	case ctx.Err() != nil:
		return res, fmt.Errorf("execute_bash: command cancelled and killed: %w", ctx.Err())
	case err != nil:
		return Result{}, fmt.Errorf("execute_bash: terminal: %w", err)
	}
	return res, nil
}

// killGroup sends SIGKILL to the process group led by p (ESRCH ignored).
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// formatOutput renders the result text: "exit status: <status>", then the
// non-empty streams.
func formatOutput(status string, stdout, stderr *capture) string {
	var b strings.Builder
	b.WriteString("exit status: " + status + "\n")
	if s := stdout.String(); s != "" {
		b.WriteString("--- stdout ---\n")
		b.WriteString(strings.TrimSuffix(s, "\n"))
		b.WriteString("\n")
	}
	if s := stderr.String(); s != "" {
		b.WriteString("--- stderr ---\n")
		b.WriteString(strings.TrimSuffix(s, "\n"))
		b.WriteString("\n")
	}
	if stdout.total == 0 && stderr.total == 0 {
		b.WriteString("(no output)\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// capture is an io.Writer keeping the first and last limit/2 bytes of what
// is written to it and counting the rest; it forwards complete lines to
// Env.Progress (serialised by mu across a command's two streams).
type capture struct {
	limit      int
	head, tail []byte // tail is a ring of at most limit-limit/2 bytes
	tailStart  int    // ring start when the tail is full
	total      int64
	env        *Env
	mu         *sync.Mutex
	line       []byte // partial progress line
}

// maxProgressLine caps one progress line (bytes).
const maxProgressLine = 1000

func newCapture(limit int, env *Env, mu *sync.Mutex) *capture {
	return &capture{limit: max(limit, 2), env: env, mu: mu}
}

// Write records p; it never fails.
func (c *capture) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	rest := p
	if n := c.limit/2 - len(c.head); n > 0 {
		n = min(n, len(rest))
		c.head = append(c.head, rest[:n]...)
		rest = rest[n:]
	}
	tailCap := c.limit - c.limit/2
	for _, b := range rest {
		if len(c.tail) < tailCap {
			c.tail = append(c.tail, b)
			continue
		}
		c.tail[c.tailStart] = b
		c.tailStart = (c.tailStart + 1) % tailCap
	}
	if c.env != nil && c.env.Progress != nil {
		c.progress(p)
	}
	return len(p), nil
}

// progress forwards the complete lines in p.
func (c *capture) progress(p []byte) {
	for len(p) > 0 {
		i := indexNewline(p)
		if i < 0 {
			if len(c.line) < maxProgressLine {
				c.line = append(c.line, p[:min(len(p), maxProgressLine-len(c.line))]...)
			}
			return
		}
		if len(c.line) < maxProgressLine {
			c.line = append(c.line, p[:min(i, maxProgressLine-len(c.line))]...)
		}
		c.emit()
		p = p[i+1:]
	}
}

func indexNewline(p []byte) int {
	for i, b := range p {
		if b == '\n' {
			return i
		}
	}
	return -1
}

// emit sends the pending progress line.
func (c *capture) emit() {
	line := strings.ToValidUTF8(strings.TrimSuffix(string(c.line), "\r"), "\uFFFD")
	c.line = c.line[:0]
	c.mu.Lock()
	defer c.mu.Unlock()
	c.env.progress(line)
}

// flush sends a last progress line without a newline.
func (c *capture) flush() {
	if len(c.line) > 0 && c.env != nil && c.env.Progress != nil {
		c.emit()
	}
}

// String returns the kept output, valid UTF-8, with a notice where bytes
// were cut.
func (c *capture) String() string {
	if c.total <= int64(len(c.head)+len(c.tail)) {
		return strings.ToValidUTF8(string(c.head)+string(c.tail), "\uFFFD")
	}
	tail := append(append([]byte{}, c.tail[c.tailStart:]...), c.tail[:c.tailStart]...)
	cut := c.total - int64(len(c.head)+len(tail))
	return strings.ToValidUTF8(string(c.head), "\uFFFD") +
		fmt.Sprintf("\n[... %d bytes of output cut (output is capped at %d bytes); redirect to a file and read parts of it to see more ...]\n", cut, c.limit) +
		strings.ToValidUTF8(string(tail), "\uFFFD")
}

// CommandAllowed applies env's deniedCommands to command, with kiro's
// toolsSettings semantics: patterns are RE2 regular expressions anchored at
// both ends (\A(?:p)\z), matching across newlines ("." matches "\n", so
// ".*" denies everything). A command is refused when a pattern matches the
// whole command or one of its simple commands: those bash's grammar finds
// (parseShell: anywhere, inside substitutions, subshells, functions, loops
// and conditionals too) and, as well, the parts between ;, &, |, &&, ||,
// newlines and the edges of substitutions and subshells split without
// regard to quoting, so a denial can be over-eager but not dodged by
// chaining or by text the parser reads differently. An invalid pattern
// refuses the command (fail closed; kiro treats it as ".*"). The error
// names the pattern that decided.
//
// AllowedCommands do not refuse anything: in kiro they are the commands
// that run without prompting (CommandPermission); the others go through
// the approval step. Neither list is a sandbox: see the package doc,
// "Command lists".
func CommandAllowed(env *Env, command string) error {
	if env == nil || len(env.DeniedCommands) == 0 {
		return nil
	}
	parts := append(splitCommand(command), parseShell(command).all...)
	for _, p := range env.DeniedCommands {
		re, err := regexp.Compile(`(?s)\A(?:` + p + `)\z`)
		if err != nil {
			return fmt.Errorf("execute_bash: command refused: deniedCommands pattern %q is invalid: %v", p, err)
		}
		if re.MatchString(command) {
			return fmt.Errorf("execute_bash: command refused: it matches the deniedCommands pattern %q", p)
		}
		for _, part := range parts {
			if re.MatchString(part) {
				return fmt.Errorf("execute_bash: command refused: %q matches the deniedCommands pattern %q", part, p)
			}
		}
	}
	return nil
}

// CommandPreApproved reports whether command runs without prompting under
// env's allowedCommands and autoAllowReadonly when execute_bash is not in
// allowedTools: CommandPermission(env, command, false) allows it. So
// "git .*" pre-approves "git status" but not "git status; rm -rf ~",
// "git $(rm x)" or "echo ${x@P}" under "echo .*". False for a nil env.
func CommandPreApproved(env *Env, command string) bool {
	return env != nil && CommandPermission(env, command, false).Permission == Allow
}

// substitutions turns the openings and closings of command and process
// substitutions and subshells into separators for splitCommand.
var substitutions = strings.NewReplacer("$(", "\n", "<(", "\n", ">(", "\n", "`", "\n", "(", "\n", ")", "\n")

// splitCommand splits a shell command into its simple commands at ;, &, |,
// &&, ||, newlines and the edges of substitutions and subshells ($( ), ` `,
// <( ), >( ), ( )), ignoring quotes, trimmed, empty parts dropped.
func splitCommand(command string) []string {
	f := strings.FieldsFunc(substitutions.Replace(command), func(r rune) bool {
		return r == ';' || r == '&' || r == '|' || r == '\n' || r == '\r'
	})
	out := f[:0]
	for _, p := range f {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
