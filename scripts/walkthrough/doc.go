// Package walkthrough holds the fresh-clone walkthrough: a test that clones
// the repository into a temporary directory with git, installs the binary
// as the README says, runs the README's quick start offline (no API key:
// the recorded demo answers, the tools run for real) line by line, and
// checks the exit codes the README promises: 0 ok, 1 runtime failure, 2
// usage or configuration error, 130 Ctrl-C with a resume hint.
//
// Run it with
//
//	go test ./scripts/walkthrough -v
//
// It is skipped under -short, and needs git and the go command on $PATH.
package walkthrough
