// Command securityreport counts strata's attack tests from a `go test
// -json` stream and prints the figures of the README's security section:
//
//	go test ./... -run '^Test(Attack|Limit)[A-Z]' -json | go run ./internal/securityreport
//
// (scripts/security-figures runs exactly that). A test named TestAttack…
// plays one attack a hostile model or repository would try (a loopback
// provider scripted per test, real processes, real files); each leaf test
// (a test without subtests, or each subtest) is one attack, held when it
// passes. A test named TestLimit… shows what a documented limit lets
// through (it passes while the limit stands). With -readme FILE the figures
// line between the markers "<!-- security-figures -->" and
// "<!-- /security-figures -->" is compared (-check: exit 1 when it differs)
// or rewritten (-write).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (test2json).
type event struct {
	Action  string
	Package string
	Test    string
}

// Figures are the counts of one run.
type Figures struct {
	Attacks, Held, Failed, Skipped int // leaf TestAttack… tests by outcome
	Limits                         int // leaf TestLimit… tests that passed (limits still shown)
	Failures                       []string
}

// Line is the figures as the README prints them.
func (f Figures) Line() string {
	s := fmt.Sprintf("**%d attacks tried, %d held**", f.Attacks, f.Held)
	if f.Skipped > 0 {
		s += fmt.Sprintf(" (%d skipped: a tool they need was missing)", f.Skipped)
	}
	return s + fmt.Sprintf("; %d known limits shown by tests (TestLimit…, what still gets through).", f.Limits)
}

// count reads a test2json stream and counts the leaf tests.
func count(r io.Reader) (Figures, error) {
	outcome := map[string]string{} // "pkg TestX/sub" → pass, fail, skip
	var names []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue // build output
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return Figures{}, fmt.Errorf("securityreport: not go test -json output: %w", err)
		}
		if !securityTest(e.Test) {
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
			k := e.Package + " " + e.Test
			if _, ok := outcome[k]; !ok {
				names = append(names, k)
			}
			outcome[k] = e.Action
		}
	}
	if err := sc.Err(); err != nil {
		return Figures{}, fmt.Errorf("securityreport: %w", err)
	}
	sort.Strings(names)
	var f Figures
	for i, k := range names {
		if i+1 < len(names) && strings.HasPrefix(names[i+1], k+"/") {
			continue // has subtests: they are the attacks
		}
		attack := strings.HasPrefix(k[strings.IndexByte(k, ' ')+1:], "TestAttack")
		switch o := outcome[k]; {
		case attack && o == "pass":
			f.Attacks++
			f.Held++
		case attack && o == "fail":
			f.Attacks++
			f.Failed++
			f.Failures = append(f.Failures, k)
		case attack:
			f.Skipped++
		case o == "pass":
			f.Limits++
		case o == "fail":
			f.Failures = append(f.Failures, k)
		}
	}
	return f, nil
}

// securityTest reports whether name (a test or subtest) is TestAttackX… or
// TestLimitX… with X upper case, so TestLimitsAndBeforeTurn is not one.
func securityTest(name string) bool {
	for _, p := range []string{"TestAttack", "TestLimit"} {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" && rest[0] >= 'A' && rest[0] <= 'Z' {
			return true
		}
	}
	return false
}

const begin, end = "<!-- security-figures -->", "<!-- /security-figures -->"

// replaceFigures returns readme with the text between the markers set to
// line, and whether it changed.
func replaceFigures(readme []byte, line string) ([]byte, bool, error) {
	s := string(readme)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return nil, false, fmt.Errorf("securityreport: the README has no %s … %s markers", begin, end)
	}
	out := s[:i+len(begin)] + line + s[j:]
	return []byte(out), out != s, nil
}

func main() {
	readme := flag.String("readme", "", "README to check or update (the line between the security-figures markers)")
	check := flag.Bool("check", false, "with -readme: exit 1 when the README's figures differ from this run")
	write := flag.Bool("write", false, "with -readme: rewrite the README's figures")
	flag.Parse()
	f, err := count(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(f.Line())
	for _, k := range f.Failures {
		fmt.Fprintf(os.Stderr, "securityreport: FAILED %s\n", k)
	}
	if *readme == "" {
		if len(f.Failures) > 0 {
			os.Exit(1)
		}
		return
	}
	raw, err := os.ReadFile(*readme)
	if err != nil {
		fmt.Fprintln(os.Stderr, "securityreport:", err)
		os.Exit(2)
	}
	out, changed, err := replaceFigures(raw, f.Line())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	switch {
	case *write && changed:
		if err := os.WriteFile(*readme, out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "securityreport:", err)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "securityreport: updated %s\n", *readme)
	case *check && changed:
		fmt.Fprintf(os.Stderr, "securityreport: %s's security figures are out of date: run scripts/security-figures --write\n", *readme)
		os.Exit(1)
	}
	if len(f.Failures) > 0 {
		os.Exit(1)
	}
}
