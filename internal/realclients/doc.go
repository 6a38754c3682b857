//go:build linux

// Package realclients is the harness of the tests that run the published
// agent clients (Claude Code, Codex, Gemini CLI, OpenCode, Qwen Code,
// Copilot CLI, Kilo, Cline), installed from npm by
// scripts/install-npm.sh clients: the model stand-in they talk to
// offline, each client's configuration with the two stubborn MCP servers,
// the environment they run in, how a detached client is started, and how
// the processes a test marked are found and ended. Test support only: no
// product code imports it.
package realclients
