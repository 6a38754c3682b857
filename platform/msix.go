package platform

import (
	"strings"
)

// Container is an MSIX app's container on Windows: the job object the
// AppInfo service makes for a packaged app's launch, named
// Container_<package full name>-<user SID>, which every process the app
// starts joins, breakaway disabled (anthropics/claude-code #89676 names
// one by handle.exe: Container_Claude_1.44121.4.0_x64__pzs8sxrjxfjjc-<SID>).
// The updater ends the processes that carry the package's identity; the
// ones the app's sessions started (shells, MCP servers, tail -f | grep)
// carry none, stay in the job, and while they live a new container for
// the package cannot be made: its next start fails with 0x80070020
// (AppModel-Runtime events 215/208, #53247, #93220).
type Container struct {
	// Job is the job object's name, as the object directory lists it.
	Job string
	// Package is the package full name in it:
	// Name_Version_Architecture_ResourceId_PublisherId.
	Package string
	// Installed are the full names of the package family as installed for
	// this user now (GetPackagesByPackageFamily); nil when that could not
	// be read, empty when none is installed.
	Installed []string
	// Members are the processes the job holds, as it listed them after the
	// table was read.
	Members []ContainerMember
}

// ContainerMember is one process in a container's job.
type ContainerMember struct {
	PID int
	// Package is the package identity the process carries
	// (GetPackageFullName): the app's own processes have one; what its
	// sessions started has none. Empty: none, or not readable.
	Package string
	// Image is the full path of its executable, empty if not read.
	Image string
	// Unread: its identity could not be read (it could not be opened, or
	// GetPackageFullName failed): whether it is the app's own is not
	// known.
	Unread bool
}

// Own reports whether m is the app's own process: it carries a package
// identity, or its image is the package's own, under
// WindowsApps\<package full name>\ (how users tell the app's processes
// apart, #92202). What the app's sessions started is neither.
func (c *Container) Own(m ContainerMember) bool {
	if m.Package != "" {
		return true
	}
	img := strings.ToLower(strings.ReplaceAll(m.Image, "/", `\`))
	return c.Package != "" && strings.Contains(img, `\windowsapps\`+strings.ToLower(c.Package)+`\`)
}

// PackageID is the parts of a package full name.
type PackageID struct {
	Name, Version, Arch, Resource, Publisher string
}

// Family is the package family name: Name_PublisherId.
func (id PackageID) Family() string { return id.Name + "_" + id.Publisher }

// ParsePackageFullName splits a package full name
// (Claude_1.52386.0.0_x64__pzs8sxrjxfjjc) into its five parts; false if
// it has not five, or lacks a name, version or publisher. A package name
// has no underscore (letters, digits, '.' and '-').
func ParsePackageFullName(full string) (PackageID, bool) {
	f := strings.Split(full, "_")
	if len(f) != 5 || f[0] == "" || f[1] == "" || f[4] == "" {
		return PackageID{}, false
	}
	return PackageID{Name: f[0], Version: f[1], Arch: f[2], Resource: f[3], Publisher: f[4]}, true
}

// ContainerJob parses a container job's name, Container_<full name>-<SID>,
// into the package full name and the user's SID; false for another name.
func ContainerJob(name string) (pkg, sid string, ok bool) {
	rest, found := strings.CutPrefix(name, "Container_")
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(rest, "-S-1-")
	if i <= 0 {
		return "", "", false
	}
	pkg, sid = rest[:i], rest[i+1:]
	if _, ok := ParsePackageFullName(pkg); !ok {
		return "", "", false
	}
	return pkg, sid, true
}

// Containers lists the MSIX containers of the user the snapshot was taken
// as, with their members (Windows; a recorded Windows table's). It is read
// when asked, once: a scan asks only when its policy names an app
// ([[msix]]). Elsewhere: none. An error is doubt: what was not read proves
// nothing.
func (s *Snapshot) Containers() ([]Container, error) {
	if s.containers == nil {
		return nil, nil
	}
	s.containersOnce.Do(func() { s.containersRead, s.containersErr = s.containers() })
	return s.containersRead, s.containersErr
}
