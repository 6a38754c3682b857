package all

import (
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/antigravity"
	"github.com/orphanreaper/reaper/client/claudecode"
	"github.com/orphanreaper/reaper/client/cline"
	"github.com/orphanreaper/reaper/client/codex"
	"github.com/orphanreaper/reaper/client/continuecli"
	"github.com/orphanreaper/reaper/client/copilot"
	"github.com/orphanreaper/reaper/client/gemini"
	"github.com/orphanreaper/reaper/client/kilo"
	"github.com/orphanreaper/reaper/client/openclaw"
	"github.com/orphanreaper/reaper/client/opencode"
	"github.com/orphanreaper/reaper/client/pi"
	"github.com/orphanreaper/reaper/client/qwen"
)

// Clients is every client, in a fixed order.
var Clients = client.NewSet(
	openclaw.Client,
	claudecode.Client,
	codex.Client,
	gemini.Client,
	opencode.Client,
	qwen.Client,
	copilot.Client,
	kilo.Client,
	cline.Client,
	pi.Client,
	continuecli.Client,
	antigravity.Client,
)
