// Stands in for the ACP adapter (@agentclientprotocol/claude-agent-acp): a
// long-lived Node process in its own session.
setInterval(() => {}, 1 << 30);
