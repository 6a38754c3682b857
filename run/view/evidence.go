package view

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/run"
)

// errNoSubject is an evidence subject that is neither a process nor a
// session of this pass.
var errNoSubject = errors.New("no such process or session")

// Bundle is the evidence bundle for a bug report about subject — a pid, or a
// session id as ps shows it: the session or orphan it is or is in (the ps
// view's), explain's story of its process, the client's record with an
// excerpt where this user may read it, the versions — every string
// redacted (audit.Evidence.Redact): secrets out, homes as "~". No
// environment is read for it: the evidence lines carry the markers the
// scan used, and nothing else.
//
// A record is excerpted only when it is the reaper's own user's word and
// file: read as that user, not through a link, owned by them
// (platform.ReadBeneath). As root, a user's record is named with the
// command that reads it as its user — root copies no user's bytes.
func Bundle(p *run.Pass, subject string, reaper audit.Version) (*audit.Evidence, error) {
	v := PS(p)
	ev := &audit.Evidence{SchemaVersion: 1, Generated: time.Now().UTC().Format(time.RFC3339), Subject: subject, Reaper: reaper,
		Kernel: platform.Kernel(), Records: []audit.RecordExcerpt{}}
	pid, err := strconv.Atoi(subject)
	isPID := err == nil && pid > 0
	for i := range v.Sessions {
		s := &v.Sessions[i]
		if isPID && (s.PID == pid || slices.ContainsFunc(s.Processes, func(q audit.PSProcess) bool { return q.PID == pid })) ||
			!isPID && s.SessionID != "" && s.SessionID == subject {
			ev.Session = s
			break
		}
	}
	for i := range v.Orphans {
		o := &v.Orphans[i]
		if isPID && slices.ContainsFunc(o.Processes, func(q audit.PSProcess) bool { return q.PID == pid }) ||
			!isPID && o.SessionID != "" && o.SessionID == subject {
			ev.Orphan = o
			break
		}
	}
	if !isPID {
		switch {
		case ev.Orphan != nil:
			pid = ev.Orphan.RootPID
		case ev.Session != nil && ev.Session.State != "ended":
			pid = ev.Session.PID
		}
	}
	if pid > 0 {
		if x, err := Explain(p, pid); err == nil {
			ev.Explanation = x
		} else if ev.Session == nil && ev.Orphan == nil {
			return nil, err
		}
	}
	if ev.Session == nil && ev.Orphan == nil && ev.Explanation == nil {
		return nil, fmt.Errorf("%q: %w (a pid, or a session id as reaper ps shows it)", subject, errNoSubject)
	}
	if ev.Session == nil && ev.Orphan != nil && ev.Orphan.SessionID != "" {
		for i := range v.Sessions {
			if s := &v.Sessions[i]; s.SessionID == ev.Orphan.SessionID {
				ev.Session = s
			}
		}
	}
	if s := ev.Session; s != nil && s.Record != "" {
		ev.Records = append(ev.Records, excerpt(s.Record, s.Speaker))
	}
	homes := []string{}
	if h, err := os.UserHomeDir(); err == nil {
		homes = append(homes, h)
	}
	for _, uid := range []int64{sessionUID(ev.Session), orphanUID(ev.Orphan)} {
		if uid >= 0 {
			if u, err := user.LookupId(strconv.FormatInt(uid, 10)); err == nil {
				homes = append(homes, u.HomeDir)
			}
		}
	}
	if err := ev.Redact(homes); err != nil {
		return nil, err
	}
	return ev, nil
}

func sessionUID(s *audit.PSSession) int64 {
	if s == nil {
		return -1
	}
	return s.UID
}

func orphanUID(o *audit.PSOrphan) int64 {
	if o == nil {
		return -1
	}
	return o.UID
}

// excerpt is a record's first bytes, when the record is this user's word
// and file; else why not, and how to get them.
func excerpt(record string, speaker int64) audit.RecordExcerpt {
	path := record
	if i := strings.Index(record, " /"); i >= 0 {
		path = record[i+1:]
	}
	out := audit.RecordExcerpt{Path: path}
	me := int64(platform.EUID())
	if speaker != me {
		name := strconv.FormatInt(speaker, 10)
		if u, err := user.LookupId(name); err == nil {
			name = u.Username
		}
		out.Note = fmt.Sprintf("uid %d's record: reaper reads no other user's file into a bundle; its user can run: sudo -u %s reaper evidence …", speaker, name)
		return out
	}
	b, err := platform.ReadBeneath(filepath.Dir(path), filepath.Base(path), 1<<20, int(me))
	var fe *platform.FileError
	switch {
	case err != nil && errors.As(err, &fe):
		out.Note = fmt.Sprintf("not read: %v", fe.Err)
	case err != nil:
		out.Note = "not read: " + err.Error()
	case len(b) > audit.MaxExcerpt:
		out.Excerpt = audit.Printable(string(b[:audit.MaxExcerpt]))
		out.Note = fmt.Sprintf("the first %d of %d bytes", audit.MaxExcerpt, len(b))
	default:
		out.Excerpt = audit.Printable(string(b))
	}
	return out
}
