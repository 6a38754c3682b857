package audit

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
)

// A command's log lines read as its other lines do: "reaper WHO: ", the
// level where it is not plain information, the message, and its values in
// brackets; a user's text escaped; records below the level dropped.
func TestLogger(t *testing.T) {
	var b bytes.Buffer
	log := NewLogger(&b, "watch", slog.LevelInfo)
	log.Warn("the policy was not read again", "err", errors.New("policy.toml:3: bad"), "path", "/etc/reaper/policy.toml")
	log.Error("pass failed", "trigger", "hint")
	log.Info("started")
	log.Debug("dropped")
	log.With("uid", 1000).WithGroup("dir").Info("changed", "path", "/home/a\nb")
	want := `reaper watch: warning: the policy was not read again (err="policy.toml:3: bad", path=/etc/reaper/policy.toml)
reaper watch: error: pass failed (trigger=hint)
reaper watch: started
reaper watch: changed (uid=1000, dir.path=/home/a\nb)
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
