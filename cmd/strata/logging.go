package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// logMaxBytes is the size past which the log file is moved to FILE.1 (one
// old file kept) when a command starts.
const logMaxBytes = 10 << 20

// logState is the troubleshooting log of one strata process: every command
// appends to a log file (slog text lines: start, warnings, provider HTTP
// requests and MCP server output at debug level, exit), and --verbose also
// writes the debug lines to stderr.
type logState struct {
	verbose bool
	path    string   // --log-file
	file    *os.File // nil when off or not opened
	start   time.Time
	fileLog *slog.Logger // the file alone (warnings already on stderr)
}

var logs logState

// addLogFlags adds the global --verbose and --log-file flags to root.
func addLogFlags(root *cobra.Command) {
	root.PersistentFlags().BoolVar(&logs.verbose, "verbose", false,
		"log debug detail (provider HTTP requests, MCP servers, where settings came from) to stderr as well as to the log file")
	root.PersistentFlags().StringVar(&logs.path, "log-file", "",
		"troubleshooting log (default: $STRATA_LOG_FILE, else "+defaultLogHint+"; 'off' disables it)")
}

// defaultLogHint names the default log file for help texts.
const defaultLogHint = "$XDG_STATE_HOME/strata/strata.log, else <user cache dir>/strata/strata.log (~/.cache on Linux, ~/Library/Caches on macOS)"

// defaultLogPath is the log file used without --log-file: $STRATA_LOG_FILE,
// else $XDG_STATE_HOME/strata/strata.log, else os.UserCacheDir()/strata/strata.log.
// "" means no log file (STRATA_LOG_FILE=off, or no cache directory).
func defaultLogPath() string {
	if p := os.Getenv("STRATA_LOG_FILE"); p != "" {
		return p
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "strata", "strata.log")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "strata", "strata.log")
}

// startLog opens the log file and installs the default slog logger for the
// command c. A log file that cannot be opened is a warning, never a failure:
// the command runs without it.
func (l *logState) startLog(c *cobra.Command) {
	l.start = time.Now()
	level := slog.LevelInfo
	if l.verbose {
		level = slog.LevelDebug
	}
	path := l.path
	if path == "" {
		path = defaultLogPath()
	}
	var handlers []slog.Handler
	if path != "" && path != "off" {
		f, err := openLog(path)
		if err != nil {
			warn(fmt.Sprintf("log file: %v (set --log-file or STRATA_LOG_FILE, or 'off')", err))
		} else {
			l.file, l.path = f, path
			h := slog.NewTextHandler(f, &slog.HandlerOptions{Level: level})
			handlers = append(handlers, h)
			l.fileLog = slog.New(h).With("pid", os.Getpid())
		}
	}
	if l.verbose {
		handlers = append(handlers, slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if len(handlers) == 0 {
		slog.SetDefault(slog.New(slog.DiscardHandler))
		return
	}
	slog.SetDefault(slog.New(slog.NewMultiHandler(handlers...)).With("pid", os.Getpid()))
	var set []string
	c.Flags().Visit(func(f *pflag.Flag) { set = append(set, "--"+f.Name+"="+f.Value.String()) })
	wd, _ := os.Getwd()
	slog.Info("start", "command", c.CommandPath(), "flags", strings.Join(set, " "), "dir", wd, "version", versionLine())
	if l.verbose && l.file != nil {
		fmt.Fprintf(os.Stderr, "strata: logging to %s\n", l.path)
	}
}

// openLog opens path for appending (0600, parent directories made 0700),
// first moving a file over logMaxBytes to path+".1".
func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && st.Size() > logMaxBytes {
		_ = os.Rename(path, path+".1")
	}
	return os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
}

// endLog records the exit code and error, and closes the file.
func (l *logState) endLog(code int, err error) {
	if l.start.IsZero() {
		return
	}
	attrs := []any{"code", code, "elapsed", time.Since(l.start).Round(time.Millisecond)}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	slog.Info("exit", attrs...)
	if l.file != nil {
		l.file.Close()
	}
}

// logWarning records a warning already printed on stderr in the log file.
func (l *logState) logWarning(msg string) {
	if l.fileLog != nil {
		l.fileLog.Warn(msg)
	}
}

// mcpStderr is where MCP servers' stderr goes: the terminal's stderr, and
// the log file when there is one.
func (l *logState) mcpStderr() io.Writer {
	if l.file != nil {
		return io.MultiWriter(os.Stderr, l.file)
	}
	return os.Stderr
}

// fileWriter is the log file, or nil when there is none.
func (l *logState) fileWriter() io.Writer {
	if l.file == nil {
		return nil
	}
	return l.file
}

// fileOnly stops the --verbose copy to stderr (the full-screen chat owns
// the terminal); the log file keeps every line.
func (l *logState) fileOnly() {
	if l.fileLog != nil {
		slog.SetDefault(l.fileLog)
	} else {
		slog.SetDefault(slog.New(slog.DiscardHandler))
	}
}
