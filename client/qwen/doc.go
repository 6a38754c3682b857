// Package qwen is Qwen Code's adapter (@qwen-code/qwen-code, a fork of
// Gemini CLI). Its node launcher relaunches the CLI (QWEN_CODE_NO_RELAUNCH
// on the child) and puts its own pid on everything below as
// QWEN_CODE_LAUNCHER_PID; the launcher leads the process group they all
// keep. A SIGKILLed launcher leaves the relaunched CLI and its servers
// running, headless: the launcher gone proves the client's session over.
// ~/.qwen/settings.json names its stdio MCP servers (mcpServers), which
// gives a server with no marker of its own its kind.
package qwen
