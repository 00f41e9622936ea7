package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// Offline, every prompt of a `chat --plain` gets the demo's answer: the
// glob and fs_read calls run for real each time, and the closing text says
// it is a recording (the second prompt used to fail with replay_exhausted).
func TestOfflineChatAnswersEveryPrompt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Project Wombat\n"), 0o644)
	r := runCLIInput(t, dir, nil, strings.NewReader("first\nsecond\nthird\n"), "chat", "--plain")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, "replay_exhausted") {
		t.Fatalf("the demo ran out of responses:\n%s", r.stderr)
	}
	for want, n := range map[string]int{"⏺ glob": 3, "⏺ fs_read": 3, "# Project Wombat": 3,
		"only these words are a recording": 1, "OFFLINE DEMO": 2, "these words are a recording": 3} {
		if got := strings.Count(r.stdout, want); got != n {
			t.Errorf("stdout has %q %d times, want %d:\n%s", want, got, n, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "prompt 3 of an OFFLINE DEMO") {
		t.Errorf("third answer does not say which prompt it is:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "9 model call(s)") {
		t.Errorf("want 3 model calls per prompt:\n%s", r.stderr)
	}
}

// Ctrl-C (SIGINT) during a streamed answer stops run and chat --plain with
// exit 130 and says on stderr how to resume the session it names.
func TestInterruptExits130WithResumeHint(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--replay-delay", "300ms", "list this directory"},
		{"chat", "--plain", "--replay-delay", "300ms"},
	} {
		t.Run(args[0], func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(binary, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "STRATA_DATA_DIR="+filepath.Join(dir, ".data"), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
			stdin, err := cmd.StdinPipe() // kept open: chat waits for the next line
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			io.WriteString(stdin, "hello\n")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The first streamed words show the loop is mid-stream.
			line, err := bufio.NewReader(stdout).ReadString(' ')
			if err != nil {
				t.Fatalf("no streamed output (%v): %q\n%s", err, line, stderr.String())
			}
			cmd.Process.Signal(syscall.SIGINT)
			go io.Copy(io.Discard, stdout)
			err = cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 130 {
				t.Fatalf("exit %v, want 130\nstderr: %s", err, stderr.String())
			}
			m := regexp.MustCompile(`strata: session ([0-9a-f]+) `).FindStringSubmatch(stderr.String())
			if m == nil || !strings.Contains(stderr.String(), "resume with: strata sessions resume "+m[1]+"\n") {
				t.Errorf("stderr lacks the resume hint for the session:\n%s", stderr.String())
			}
		})
	}
}

// --provider bedrock without any AWS credentials (clean HOME, no AWS_*
// variables) fails as a usage error naming what to set, and no AWS SDK
// log line (WARN …) reaches stderr.
func TestBedrockWithoutCredentialsSaysWhatToSet(t *testing.T) {
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(binary, "run", "--provider", "bedrock", "hello")
	cmd.Dir = dir
	// The metadata endpoint is pointed at a closed loopback port so the
	// chain's last source fails at once, without the network.
	cmd.Env = append(env, "HOME="+dir, "STRATA_DATA_DIR="+filepath.Join(dir, ".data"),
		"AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2\nstderr: %s", err, stderr.String())
	}
	for _, want := range []string{"no AWS credentials", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "~/.aws/credentials", "AWS_REGION"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "WARN") || strings.Contains(stderr.String(), "SDK ") {
		t.Errorf("an AWS SDK log line leaked:\n%s", stderr.String())
	}
}
