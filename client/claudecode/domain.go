package claudecode

import (
	"os"
	"runtime"
	"strings"
	"sync"
)

// domain is the pid domain of this reaper as Claude Code 2.1.330+ writes
// it in a session file, linux:<machine-id>:pid:[<pid-ns inode>], or ""
// where it cannot be told: a session file of another domain names a pid of
// another pid namespace (a container sharing the home), which is no
// process here.
var domain = sync.OnceValue(func() string {
	if runtime.GOOS != "linux" {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	id, err := os.ReadFile("/etc/machine-id")
	if err != nil || len(strings.TrimSpace(string(id))) == 0 {
		return ""
	}
	return "linux:" + strings.TrimSpace(string(id)) + ":" + ns
})
