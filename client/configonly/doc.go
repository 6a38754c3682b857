// Package configonly is the adapter of a client whose only state reaper
// reads is its config's MCP servers (Gemini CLI, Kilo, OpenCode, Qwen
// Code): such a client records no pid, so its marks in the process table
// prove its leftovers, and its config names the servers that are its.
// Each such client is a value of Adapter — its facts, where its dir is,
// how its config is read — not a package of near copies; it passes the
// seam's contract suite like any other. It never reads anything but the
// config its Read names, and never as anyone but the dir's owner.
package configonly
