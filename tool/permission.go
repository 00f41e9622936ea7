package tool

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Permission is what the allowlist decides for one tool call before it
// runs, as kiro's eval_perm does (PermissionEvalResult: Allow, Ask, Deny).
type Permission uint8

const (
	// Ask leaves the call to the approval step (a person, or the mode).
	Ask Permission = iota
	// Allow runs the call without prompting.
	Allow
	// Deny refuses the call without asking anyone, in every mode.
	Deny
)

// String returns "ask", "allow" or "deny".
func (p Permission) String() string {
	switch p {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	}
	return "ask"
}

// Verdict is the permission of one tool call and why.
type Verdict struct {
	Permission Permission
	// Reason says why the call is denied, or asked about when Person.
	Reason string
	// Person marks an Ask that only a person's answer to this very call can
	// grant: a path outside the workspace and its allowedPaths, or a write
	// to an agent configuration file (ConfigPath). Such a call is never
	// pre-approved, an "allow always" answer does not carry over to later
	// calls, and where nobody is asked (mode all, no approver) it is
	// refused. docs/security.md, "Who may approve what".
	Person bool
}

// kiroReadonly are the commands kiro's autoAllowReadonly runs without
// prompting when every command of a pipeline is one of them
// (READONLY_COMMANDS in kiro's execute/mod.rs).
var kiroReadonly = map[string]bool{
	"ls": true, "cat": true, "echo": true, "pwd": true, "which": true, "head": true,
	"tail": true, "find": true, "grep": true, "dir": true, "type": true,
}

// kiroDangerous are the substrings that make kiro ask about a command
// whatever its allowedCommands say (DANGEROUS_PATTERNS in execute/mod.rs):
// substitutions, redirections, chaining, background jobs, any "$" and IFS.
var kiroDangerous = []string{"<(", "$(", "`", ">", "&&", "||", "&", ";", "$", "\n", "\r", "IFS"}

// CommandPermission decides an execute_bash command under env's command
// settings with kiro's rules (execute/mod.rs eval_perm and
// requires_acceptance; docs/kiro.md, "Tool permissions"):
//
//  1. a deniedCommands pattern matching the command or one of its simple
//     commands denies it (CommandAllowed), without asking; a command whose
//     text shows it writing agent configuration (a redirection to, or cp,
//     mv, tee, … naming, a ConfigPath) is asked about, by a person only;
//  2. execute_bash in allowedTools (inAllowedTools) allows the rest;
//  3. a command with a newline, a dangerous pattern (kiroDangerous), a
//     "|" without spaces around it, find with -exec/-execdir/-ok/-okdir/
//     -delete/-fprint*/-fls or grep with -P/--perl-regexp, or that is not
//     one plain pipeline of simple commands (commandShape) is asked about;
//  4. so is one that neither matches an allowedCommands pattern (whole, and
//     every command of its pipeline) nor, with AutoAllowReadonly, is a
//     pipeline of kiro's read-only commands (ls, cat, echo, pwd, which,
//     head, tail, find, grep, dir, type);
//  5. with DenyByDefault such a command is denied instead of asked.
//
// Invalid allowedCommands patterns are ignored (they allow nothing), as in
// kiro; invalid deniedCommands patterns deny every command.
func CommandPermission(env *Env, command string, inAllowedTools bool) Verdict {
	if err := CommandAllowed(env, command); err != nil {
		return Verdict{Permission: Deny, Reason: err.Error()}
	}
	if why := shellConfigWrite(env, command); why != "" {
		return Verdict{Permission: Ask, Person: true, Reason: why}
	}
	if inAllowedTools {
		return Verdict{Permission: Allow}
	}
	why := commandNeedsAsking(env, command)
	switch {
	case why == "":
		return Verdict{Permission: Allow}
	case env != nil && env.DenyByDefault:
		return Verdict{Permission: Deny, Reason: "execute_bash: command refused: denyByDefault is set and " + why}
	}
	return Verdict{Permission: Ask, Reason: why}
}

// commandNeedsAsking returns why command needs approval under env's
// allowedCommands and AutoAllowReadonly, or "" when it runs without
// prompting (steps 3 and 4 of CommandPermission).
func commandNeedsAsking(env *Env, command string) string {
	if strings.TrimSpace(command) == "" {
		return "the command is empty"
	}
	if strings.ContainsRune(command, 0) {
		return "the command contains a NUL byte"
	}
	for _, p := range kiroDangerous {
		if strings.Contains(command, p) {
			return fmt.Sprintf("the command contains %q, which kiro always asks about", p)
		}
	}
	for i := 0; i < len(command); i++ {
		if command[i] == '|' && (i == 0 || i == len(command)-1 || !isBlank(command[i-1]) || !isBlank(command[i+1])) {
			return `the command has a "|" without spaces around it`
		}
	}
	sh := parseShell(command)
	if sh.why != "" {
		return "the command is not one plain pipeline: " + sh.why
	}
	for _, words := range sh.stages {
		if words[0] == "find" && anyContains(words[1:], "-exec", "-delete", "-ok", "-fprint", "-fls") {
			return "find with -exec, -ok, -delete, -fprint or -fls can change files"
		}
		if words[0] == "grep" && (anyContains(words[1:], "-P", "--perl-regexp") || grepPerl(words[1:])) {
			return "grep -P (Perl regular expressions) can run code"
		}
	}
	if env == nil {
		return "no allowedCommands pattern matches it"
	}
	var allowed []*regexp.Regexp
	for _, p := range env.AllowedCommands {
		if re, err := regexp.Compile(`\A(?:` + p + `)\z`); err == nil {
			allowed = append(allowed, re)
		}
	}
	if matchesAll(allowed, command, sh.texts) {
		return ""
	}
	if env.AutoAllowReadonly {
		readonly := true
		for _, words := range sh.stages {
			readonly = readonly && kiroReadonly[words[0]]
		}
		if readonly {
			return ""
		}
		return "no allowedCommands pattern matches it and it is not a pipeline of read-only commands"
	}
	return "no allowedCommands pattern matches it"
}

// matchesAll reports whether some pattern matches the whole command and
// some pattern matches each of parts.
func matchesAll(res []*regexp.Regexp, command string, parts []string) bool {
	matchAny := func(s string) bool {
		for _, re := range res {
			if re.MatchString(s) {
				return true
			}
		}
		return false
	}
	if !matchAny(command) {
		return false
	}
	for _, p := range parts {
		if !matchAny(p) {
			return false
		}
	}
	return true
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

// grepPerl reports whether grep's arguments ask for Perl regular
// expressions in a form kiro's substring check misses: -P inside a cluster
// of short options (-iP) or an abbreviation of --perl-regexp (--perl).
func grepPerl(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		long, _, _ := strings.Cut(a, "=")
		switch {
		case strings.HasPrefix(a, "--"):
			if len(long) >= 3 && strings.HasPrefix("--perl-regexp", long) {
				return true
			}
		case strings.HasPrefix(a, "-") && strings.ContainsRune(a, 'P'):
			return true
		}
	}
	return false
}

func anyContains(words []string, subs ...string) bool {
	for _, w := range words {
		for _, s := range subs {
			if strings.Contains(w, s) {
				return true
			}
		}
	}
	return false
}

// CallPaths returns the paths a call of a file tool touches and how: fs_read
// (every operation's path and image_paths), grep and glob (their path,
// default the workspace root) read; fs_write writes. ok is false for other
// tools and for input that does not decode (the tool reports that itself).
func CallPaths(name string, input json.RawMessage) (paths []string, access Access, ok bool) {
	switch name {
	case "fs_read":
		var in struct {
			Operations []struct {
				Path       string   `json:"path"`
				ImagePaths []string `json:"image_paths"`
			} `json:"operations"`
		}
		if json.Unmarshal(input, &in) != nil {
			return nil, AccessRead, false
		}
		for _, op := range in.Operations {
			if op.Path != "" {
				paths = append(paths, op.Path)
			}
			paths = append(paths, op.ImagePaths...)
		}
		return paths, AccessRead, true
	case "grep", "glob", "fs_write":
		var in struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(input, &in) != nil {
			return nil, AccessRead, false
		}
		access := AccessRead
		if name == "fs_write" {
			access = AccessWrite
		}
		if in.Path == "" && access == AccessRead {
			in.Path = "."
		}
		return []string{in.Path}, access, true
	}
	return nil, AccessRead, false
}

// PathPermission decides one access of a file tool to paths with kiro's
// fs_read / fs_write rules (fs_read.rs and fs_write.rs eval_perm), one
// verdict for all of them (deny beats ask beats allow):
//
//   - a path a deniedPaths entry covers is denied, whatever allowedTools say;
//   - a path outside the workspace and the access's allowedPaths is asked
//     about, by a person only (Verdict.Person; kiro asks too);
//   - a write to an agent configuration file (ConfigPath) is asked about, by
//     a person only, unless an fs_write allowedPaths entry names it;
//   - a write an fs_write allowedPaths entry covers is allowed, and so is any
//     write of a tool in allowedTools (inAllowedTools); other writes ask;
//   - a read inside the workspace or the read allowedPaths is allowed
//     (kiro's fs_read "trusts the working directory").
//
// A path that cannot be resolved leaves the decision to inAllowedTools, and
// the tool reports the error when it runs.
func PathPermission(env *Env, access Access, paths []string, inAllowedTools bool) Verdict {
	var person string
	ask := false
	for _, p := range paths {
		r, err := resolve(env, p)
		if err != nil {
			ask = ask || (access == AccessWrite && !inAllowedTools)
			continue
		}
		pat, from, err := compileDenied(env, r.root, access).match(r.abs, r.real)
		switch {
		case err != nil:
			return Verdict{Permission: Deny, Reason: fmt.Sprintf("path %q cannot be checked: %v", p, err)}
		case pat != "":
			return Verdict{Permission: Deny, Reason: fmt.Sprintf("path %q (%s) is denied by the deniedPaths pattern %q of the %s policy", p, r.real, pat, from)}
		}
		switch {
		case person != "":
		case r.outside(env, access):
			person = fmt.Sprintf("path %q resolves to %s, outside the workspace root %s and the %s policy's allowedPaths", p, r.real, r.realRoot, access)
		case access == AccessWrite && env.protectedWrite(r):
			person = fmt.Sprintf("path %q (%s) is %s", p, r.real, env.configKind(r))
		case access == AccessWrite && !inAllowedTools && !allowedBy(env.WritePaths.AllowedPaths, r.root, r.real):
			ask = true
		}
	}
	switch {
	case person != "":
		return Verdict{Permission: Ask, Person: true, Reason: person}
	case ask:
		return Verdict{Permission: Ask}
	}
	return Verdict{Permission: Allow}
}
