// Command screenshots regenerates the chat's PNG screenshots in docs/
// (docs/cli.md, "chat"): it runs the strata binary it is given in a tmux
// pane, drives two scenes with send-keys — the offline demo's answer, and
// an fs_write waiting for approval with its diff — captures each screen with
// its colours (tmux capture-pane -e) and draws it with DejaVu Sans Mono
// (Debian's fonts-dejavu-core) into a PNG.
//
//	go build -o /tmp/strata ./cmd/strata
//	go run ./scripts/screenshots -strata /tmp/strata -out docs
//
// It needs tmux. Nothing reaches the network: the offline demo and the
// replayed model are served on 127.0.0.1.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

const fonts = "/usr/share/fonts/truetype/dejavu/"

func main() {
	bin := flag.String("strata", "", "the strata binary to run (required)")
	out := flag.String("out", "docs", "directory the PNGs are written to")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "screenshots: -strata BINARY is required (go build -o /tmp/strata ./cmd/strata)")
		os.Exit(2)
	}
	if err := run(*bin, *out); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

// scene is one screenshot: a workspace, the chat's arguments, the keys
// typed and the text the screen must show before it is captured.
type scene struct {
	name          string
	width, height int
	args          string
	keys          []string // sent one by one; "Enter", "PgUp", … are keys, the rest literal text
	ready         string
}

func run(bin, out string) error {
	regular, err := face(fonts+"DejaVuSansMono.ttf", 15)
	if err != nil {
		return err
	}
	bold, err := face(fonts+"DejaVuSansMono-Bold.ttf", 15)
	if err != nil {
		return err
	}
	ws, err := os.MkdirTemp("", "strata-shots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("# shop\n\nA small web shop.\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"), 0o644)
	recorded, err := os.MkdirTemp("", "strata-shots-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(recorded)
	edit, err := replayEdit(recorded)
	if err != nil {
		return err
	}
	for _, s := range []scene{
		{"chat.png", 100, 30, "", []string{"what is in this directory?", "Enter"}, "same question."},
		{"chat-approval.png", 100, 30, edit + " --model claude-sonnet-4-5 --approve ask", []string{"greet the world", "Enter"}, "[N] never"},
	} {
		capture, err := shoot(bin, ws, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		img := render(parse(capture, s.width), regular, bold)
		f, err := os.Create(filepath.Join(out, s.name))
		if err != nil {
			return err
		}
		if err := errors.Join(png.Encode(f, img), f.Close()); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join(out, s.name))
	}
	return nil
}

// replayEdit writes two recorded Anthropic answers (an fs_write edit of
// main.go, then a short reply) and returns the --replay flags serving them.
func replayEdit(dir string) (string, error) {
	in, _ := json.Marshal(map[string]string{"command": "str_replace", "path": "main.go",
		"old_str": "\tfmt.Println(\"hello\")", "new_str": "\tfmt.Println(\"hello, world\")\n\tfmt.Println(\"and goodbye\")"})
	replies := []struct {
		stop   llm.StopReason
		blocks []llm.Block
	}{
		{llm.StopToolUse, []llm.Block{llm.TextBlock("I'll change the greeting in `main.go`."), llm.ToolUseBlock("toolu_1", "fs_write", in)}},
		{llm.StopEndTurn, []llm.Block{llm.TextBlock("Done: `main.go` now **greets the world** and says goodbye.")}},
	}
	var flags []string
	for i, r := range replies {
		resp, err := replay.AnthropicStream(fmt.Sprintf("msg_%d", i), llm.Usage{Input: 1800, Output: 120}, r.stop, r.blocks...)
		if err != nil {
			return "", err
		}
		p := filepath.Join(dir, fmt.Sprintf(".replay-%d.sse", i))
		if err := os.WriteFile(p, resp.Body, 0o644); err != nil {
			return "", err
		}
		flags = append(flags, "--replay", p)
	}
	return strings.Join(append(flags, "--provider", "anthropic"), " "), nil
}

// shoot runs the chat in a tmux pane of its own server, types the keys,
// waits for the ready text and returns the screen with its escapes.
func shoot(bin, ws string, s scene) (string, error) {
	sock := fmt.Sprintf("strata-shots-%d", os.Getpid())
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("tmux %v: %v: %s", args, err, out)
		}
		return string(out), nil
	}
	data, err := os.MkdirTemp("", "strata-shots-data-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(data)
	cmd := fmt.Sprintf("env TERM=xterm-256color STRATA_DATA_DIR=%s STRATA_LOG_FILE=off STRATA_CONFIG=%s/none.yaml ANTHROPIC_API_KEY= OPENAI_API_KEY= %s chat %s; sleep 30",
		data, data, bin, s.args)
	if _, err := tmux("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(s.width), "-y", fmt.Sprint(s.height), "-s", "t", "-c", ws, cmd); err != nil {
		return "", err
	}
	defer exec.Command("tmux", "-L", sock, "kill-server").Run()
	if err := wait(tmux, "· ready"); err != nil {
		return "", err
	}
	for _, k := range s.keys {
		args := []string{"send-keys", "-t", "t", k}
		if k != "Enter" && k != "PgUp" && k != "PgDn" {
			args = []string{"send-keys", "-t", "t", "-l", k}
		}
		if _, err := tmux(args...); err != nil {
			return "", err
		}
	}
	if err := wait(tmux, s.ready); err != nil {
		return "", err
	}
	time.Sleep(300 * time.Millisecond) // the cursor's blink and the last redraw
	return tmux("capture-pane", "-p", "-e", "-t", "t")
}

// wait polls the pane until it shows text (30 s at most).
func wait(tmux func(...string) (string, error), text string) error {
	var screen string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var err error
		if screen, err = tmux("capture-pane", "-p", "-t", "t"); err != nil {
			return err
		}
		if strings.Contains(screen, text) {
			return nil
		}
	}
	return fmt.Errorf("the screen never showed %q:\n%s", text, screen)
}
