package watch

// Dir is a directory to watch for entries made and removed in it — a
// client's sessions dir, where a new session's file names a new owner —
// with the uid whose state it is (the caller's budget of hints is kept by
// it, as for exits).
type Dir struct {
	Path string
	UID  uint32
	// Name, on an event, is the entry made or removed ("": not known —
	// macOS says a dir changed, not what in it).
	Name string
}

// MaxDirs bounds the directories one Dirs watches: a watch on every
// account's state is one inotify watch each, from root's share
// (fs.inotify.max_user_watches); past it, the caller's backstop covers
// the rest.
const MaxDirs = 4096
