package claudecode

import (
	"sync"

	"github.com/orphanreaper/reaper/platform"
)

// domain is the pid domain of this reaper as Claude Code 2.1.330+ writes
// it in a session file, linux:<machine-id>:pid:[<pid-ns inode>], or ""
// where it cannot be told: a session file of another domain names a pid of
// another pid namespace (a container sharing the home), which is no
// process here.
var domain = sync.OnceValue(func() string {
	ns, id := platform.PIDNamespace(), platform.MachineID()
	if ns == "" || id == "" {
		return ""
	}
	return "linux:" + id + ":" + ns
})
