package policy

import (
	"errors"
	"fmt"
	"os/user"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/scan"
)

// UserName is the name this host gives uid, or "" when it has none.
func UserName(uid uint32) string { return userNames(uid) }

// userNames looks names up in the host's account database; tests give
// their own, so that none depends on what this host's passwd holds.
var userNames = func(uid uint32) string {
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return u.Username
	}
	return ""
}

func lookupUID(name string) (uint32, error) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		if runtime.GOOS == "windows" && !errors.As(err, new(user.UnknownUserError)) {
			// Windows answers an account it has not with ERROR_NONE_MAPPED.
			return 0, fmt.Errorf("%w (%v)", user.UnknownUserError(name), err)
		}
		return 0, err
	}
	uid := u.Uid
	if i := strings.LastIndexByte(uid, '-'); runtime.GOOS == "windows" && strings.HasPrefix(uid, "S-") && i > 0 {
		// A Windows account is a SID; reaper counts its users by the
		// SID's last part, the relative id (platform.EUID, Snapshot.UID).
		uid = uid[i+1:]
	}
	n, err := strconv.ParseUint(uid, 10, 32)
	return uint32(n), err
}

// tables returns the array of tables named key ([[key]]).
func (l *loader) tables(doc map[string]any, key string) []map[string]any {
	v, ok := doc[key]
	if !ok {
		return nil
	}
	ts, ok := v.([]map[string]any)
	if !ok {
		l.fail(at{index: -1, key: key}, "%s must be an array of tables: write [[%s]]", key, key)
		return nil
	}
	return ts
}

func (l *loader) unknownKeys(t map[string]any, a at, known []string) {
	for k := range t {
		found := false
		for _, kk := range known {
			found = found || k == kk
		}
		if !found {
			where := "at the top level"
			if a.table != "" {
				where = "in [" + a.table + "]"
				if a.index >= 0 {
					where = "in [[" + a.table + "]]"
				}
			}
			l.fail(at{a.table, a.index, k}, "unknown key %q %s; known keys are %s", k, where, strings.Join(known, ", "))
		}
	}
}

func (l *loader) str(t map[string]any, a at, key string) (string, bool) {
	v, ok := t[key]
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		l.fail(at{a.table, a.index, key}, "%s must be a string, not %s", key, tomlType(v))
		return "", false
	}
	return s, true
}

func (l *loader) strings(t map[string]any, a at, key string) []string {
	v, ok := t[key]
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		l.fail(at{a.table, a.index, key}, "%s must be a list of strings, like %s = [\"…\"]", key, key)
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, isStr := e.(string)
		if !isStr {
			l.fail(at{a.table, a.index, key}, "%s must be a list of strings; found %s", key, tomlType(e))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (l *loader) name(t map[string]any, a at, what string) string {
	s, ok := l.str(t, a, "name")
	if !ok || strings.TrimSpace(s) == "" {
		if _, present := t["name"]; !present {
			l.fail(a, "[[%s]] needs a name", what)
		} else if ok {
			l.fail(at{a.table, a.index, "name"}, "[[%s]] name is empty: give it a name the reports can show", what)
		}
		return ""
	}
	return s
}

func (l *loader) regex(t map[string]any, a at, key string) *regexp.Regexp {
	s, ok := l.str(t, a, key)
	if !ok {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		l.fail(at{a.table, a.index, key}, "%s %q: bad regex: %s", key, s, regexWhy(err))
		return nil
	}
	return re
}

func (l *loader) duration(t map[string]any, a at, key string) (time.Duration, bool) {
	s, ok := l.str(t, a, key)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		l.fail(at{a.table, a.index, key}, "%s %q is not a duration: write it like \"30s\", \"2m\" or \"1h30m\"", key, s)
		return 0, false
	}
	return d, true
}

// regexWhy is what is wrong with a regex, without the package's prefix:
// "missing closing ]: `[a-z`".
func regexWhy(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("%s: `%s`", se.Code, se.Expr)
	}
	return err.Error()
}

// quoted is a value as the policy wrote it: a string in quotes, else as
// is.
func quoted(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

func (l *loader) size(t map[string]any, a at, key string) (uint64, bool) {
	v, ok := t[key]
	if !ok {
		return 0, false
	}
	if n, isInt := v.(int64); isInt && n >= 0 {
		return uint64(n), true
	}
	s, _ := v.(string)
	n, err := ParseSize(s)
	if err != nil {
		l.fail(at{a.table, a.index, key}, "%s %s is not a size: write it like \"50MiB\", \"1GiB\" or a number of bytes", key, quoted(v))
		return 0, false
	}
	return n, true
}

func (l *loader) action(t map[string]any, a at) (Action, bool) {
	s, ok := l.str(t, a, "action")
	if !ok {
		return "", false
	}
	if act := Action(s); slices.Contains(Actions, act) {
		return act, true
	}
	names := make([]string, len(Actions))
	for i, a := range Actions {
		names[i] = string(a)
	}
	l.fail(at{a.table, a.index, "action"}, "unknown action %q; actions are %s", s, strings.Join(names, ", "))
	return "", false
}

var sizePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([0-9]+)\s*([KMGT]i?B?|B)?\s*$`) })

// ParseSize parses a size such as "50MiB", "1GiB", "512KB" or "4096".
// KiB, MiB, GiB, TiB are powers of 1024; KB, MB, GB, TB of 1000.
func ParseSize(s string) (uint64, error) {
	m := sizePattern().FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("size %q: want a number with B, KB, KiB, MB, MiB, GB, GiB, TB or TiB", s)
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	unit := strings.TrimSuffix(m[2], "B")
	mult := uint64(1)
	if unit != "" {
		base := uint64(1000)
		if strings.HasSuffix(unit, "i") {
			base = 1024
		}
		for i := 0; i < strings.Index("KMGT", unit[:1])+1; i++ {
			mult *= base
		}
	}
	if n > 0 && mult > ^uint64(0)/n {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

func validReason(s string) bool {
	for _, r := range scan.Reasons {
		if string(r) == s {
			return true
		}
	}
	return false
}

func validKind(s string) bool {
	for _, k := range scan.Kinds {
		if string(k) == s {
			return true
		}
	}
	return false
}

func joinReasons() string {
	var s []string
	for _, r := range scan.Reasons {
		s = append(s, string(r))
	}
	return strings.Join(s, ", ")
}

func joinKinds() string {
	var s []string
	for _, k := range scan.Kinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}
