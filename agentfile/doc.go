// Package agentfile loads the agent a workspace runs: a kiro / Amazon Q
// agent file found where kiro looks for it (Find, Resolve, Load), or
// strata's default agent built from the workspace's own AGENTS.md,
// CLAUDE.md, README.md, steering and mcp.json files (Default). A loaded
// File carries the parsed configuration (package config), its resolution
// against the project and the prompt.Context template every request
// starts from (docs/kiro.md, docs/project-files.md).
//
// Every file read into that context passes one sandboxed reader
// (ContextReader), at load time and on refresh (Refresher): inside the
// workspace or an fs_read allowedPaths entry, not denied, a regular file of
// at most MaxContextFileBytes (docs/security.md, "Files read into context").
package agentfile
