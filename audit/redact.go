package audit

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// What never leaves the machine in an evidence bundle: credentials as the
// agent clients' users hold them, found by their shape rather than a list
// of tools — the value of any flag, variable, JSON key or header whose
// name says secret, URL userinfo, and the tokens whose prefix names their
// issuer. Each is replaced by [REDACTED] and counted by kind. What must
// stay readable stays: a secret-named flag whose value is a path (a key
// file, --session-dir /tmp/x), a flag whose last word says it is not the
// secret (--token-file, --session-id, --auth-url), and every flag whose
// name says nothing of a secret (--port 8080, --keep-alive).

const redacted = "[REDACTED]"

// tokenShapes are the credentials known by their shape alone.
//
// Each comes with the literals one of which every match holds (lits; in
// lower case where fold): a string holding none is passed over without
// running the expression — the outbound rule runs every string a user
// controls through here, and most hold no secret at all. They are
// compiled when first asked: a start of reaper that redacts nothing
// (`reaper version`) compiles none.
var tokenShapes = sync.OnceValue(func() []tokenShape {
	return []tokenShape{
		{"api-key", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{8,}|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{12,}|\bAIza[0-9A-Za-z_-]{20,}|\bhf_[A-Za-z0-9]{20,}|\bnpm_[A-Za-z0-9]{30,}`), []string{"sk-", "pk-", "rk-", "AIza", "hf_", "npm_"}, false},
		{"github-token", regexp.MustCompile(`\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{16,}`), []string{"gh", "github_pat_"}, false},
		{"gitlab-token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{16,}`), []string{"glpat-"}, false},
		{"slack-token", regexp.MustCompile(`\bxox[abeoprs]-[A-Za-z0-9-]{10,}`), []string{"xox"}, false},
		{"aws-key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), []string{"AKIA", "ASIA"}, false},
		{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), []string{"eyJ"}, false},
		{"webhook", regexp.MustCompile(`(?i)hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+|discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+`), []string{"hooks.slack.com/", "discord"}, true},
	}
})

// tokenShape is one credential's shape (tokenShapes).
type tokenShape struct {
	kind string
	re   *regexp.Regexp
	lits []string
	fold bool
}

// holdsAny reports whether s holds one of lits (lower holds s in lower
// case, for folded literals).
func holdsAny(s, lower string, lits []string, fold bool) bool {
	if fold {
		s = lower
	}
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

var (
	// urlUserinfo is a URL's userinfo: user:password@ (the password may
	// hold '@', so the match runs to the last '@' before the path), or a
	// bare token@.
	urlUserinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(://)([^/\s:@"'<>]*)(:[^/\s"'<>]*)?@`) })
	// header is an HTTP header whose value is a credential, however it
	// is quoted: Authorization and Proxy-Authorization with any scheme,
	// Cookie, and X-…-Token, X-Api-Key and their kin.
	header = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b((?:proxy-)?authorization|cookie|set-cookie|x-[a-z0-9-]*(?:token|key|auth|secret|session)[a-z0-9-]*)(\s*:\s*)([^"'\n]+)`)
	})
	// queryParam is a URL's query parameter: ?token=…, &api_key=….
	queryParam = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([?&;])([A-Za-z0-9_.-]+)=([^&\s#"'<>]+)`) })
	// jsonPair is "name": "value" in a JSON excerpt.
	jsonPair = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"([A-Za-z0-9_.-]+)"(\s*:\s*)"((?:[^"\\]|\\.)*)"`) })
)

// secretStems are what a name says when its value is a secret.
var secretStems = []string{"pass", "pwd", "secret", "token", "key", "auth", "credential", "cookie", "session"}

// notSecret are words that hold a stem and say nothing of a secret, and
// plainLast the last words after which a secret-named flag's value is
// not the secret itself.
var (
	notSecret = map[string]bool{"author": true, "authors": true, "keyboard": true, "keyword": true, "keywords": true, "keys": false,
		"passthrough": true, "bypass": true, "compass": true, "tokenizer": true, "monkey": true, "hotkey": true, "turnkey": true}
	plainLast = map[string]bool{"dir": true, "directory": true, "file": true, "path": true, "id": true, "ids": true, "timeout": true,
		"ttl": true, "name": true, "port": true, "host": true, "url": true, "uri": true, "endpoint": true, "count": true, "size": true,
		"type": true, "mode": true, "level": true, "format": true, "length": true, "env": true, "var": true, "store": true, "helper": true,
		"command": true, "cmd": true, "provider": true, "method": true, "scheme": true, "required": true, "enabled": true}
)

// secretName reports whether a flag, variable or key name says its value
// is a secret: one of its words (split at - _ . and camelCase) holds a
// stem, and its last word is not one that names something else.
func secretName(name string) bool {
	name = strings.TrimLeft(name, "-")
	var words []string
	start := 0
	for i, r := range name {
		switch {
		case r == '-' || r == '_' || r == '.':
			words = append(words, name[start:i])
			start = i + 1
		case unicode.IsUpper(r) && i > start && unicode.IsLower(rune(name[i-1])):
			words = append(words, name[start:i])
			start = i
		}
	}
	words = append(words, name[start:])
	for i := range words {
		words[i] = strings.ToLower(words[i])
	}
	if len(words) == 0 || plainLast[words[len(words)-1]] {
		return false
	}
	for _, w := range words {
		if notSecret[w] {
			continue
		}
		for _, stem := range secretStems {
			if strings.Contains(w, stem) {
				return true
			}
		}
	}
	return false
}

// pathLike reports whether a value is a path, which a secret-named flag
// takes for a file that holds the secret (--key /etc/ssl/k.pem).
func pathLike(v string) bool {
	v = strings.Trim(v, `"'`)
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/")
}

// RedactString is s with its secrets replaced and homes shortened,
// counting each kind taken out.
func RedactString(s string, homes []string, counts map[string]int) string {
	lower := strings.ToLower(s)
	for _, t := range tokenShapes() {
		if !holdsAny(s, lower, t.lits, t.fold) {
			continue
		}
		if n := len(t.re.FindAllStringIndex(s, -1)); n > 0 {
			counts[t.kind] += n
			s = t.re.ReplaceAllString(s, redacted)
		}
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = redactUserinfo(s, counts)
	}
	if strings.Contains(s, "=") && strings.ContainsAny(s, "?&;") {
		s = redactQuery(s, counts)
	}
	if strings.Contains(s, ":") && holdsAny(s, strings.ToLower(s), []string{"authorization", "cookie", "x-"}, true) {
		s = redactHeaders(s, counts)
	}
	if strings.Contains(s, `"`) && strings.Contains(s, ":") {
		s = redactJSON(s, counts)
	}
	s = redactFields(s, counts)
	for _, h := range homes {
		if h == "" || h == "/" {
			continue
		}
		if n := strings.Count(s, h); n > 0 {
			counts["home"] += n
			s = strings.ReplaceAll(s, h, "~")
		}
	}
	return s
}

// redactUserinfo takes out URL passwords, and tokens as a URL's user.
func redactUserinfo(s string, counts map[string]int) string {
	return urlUserinfo().ReplaceAllStringFunc(s, func(m string) string {
		g := urlUserinfo().FindStringSubmatch(m)
		switch {
		case g[3] != "" && g[3] != ":"+redacted:
			counts["url-password"]++
			return g[1] + g[2] + ":" + redacted + "@"
		case g[3] == "" && len(g[2]) >= 16: // a token as the user: https://TOKEN@host
			counts["url-password"]++
			return g[1] + redacted + "@"
		}
		return m
	})
}

// redactQuery takes out the values of a URL's query parameters whose
// names say secret.
func redactQuery(s string, counts map[string]int) string {
	s = queryParam().ReplaceAllStringFunc(s, func(m string) string {
		g := queryParam().FindStringSubmatch(m)
		if !secretName(g[2]) || g[3] == redacted {
			return m
		}
		counts["secret-value"]++
		return g[1] + g[2] + "=" + redacted
	})
	return s
}

// redactHeaders takes out credential headers' values.
func redactHeaders(s string, counts map[string]int) string {
	s = header().ReplaceAllStringFunc(s, func(m string) string {
		g := header().FindStringSubmatch(m)
		value := g[3]
		// Authorization's scheme (Basic, Bearer, token, Digest) stays.
		if scheme, rest, ok := strings.Cut(value, " "); ok && strings.HasSuffix(strings.ToLower(g[1]), "authorization") && strings.TrimSpace(rest) != "" {
			value = scheme + " " + redacted
		} else {
			value = redacted
		}
		if value == g[3] {
			return m
		}
		counts["header"]++
		return g[1] + g[2] + value
	})
	return s
}

// redactJSON takes out the values of secret-named JSON keys.
func redactJSON(s string, counts map[string]int) string {
	s = jsonPair().ReplaceAllStringFunc(s, func(m string) string {
		g := jsonPair().FindStringSubmatch(m)
		if !secretName(g[1]) || g[3] == "" || g[3] == redacted || pathLike(g[3]) {
			return m
		}
		counts["secret-value"]++
		return `"` + g[1] + `"` + g[2] + `"` + redacted + `"`
	})
	return s
}

// redactFields takes out the values of secret-named flags and variables
// in a command line or environment line: --name=V, NAME=V, --name V (the
// next word, when it is no flag), -pV (a password glued to -p, as the
// database clients take it, unless a number: a port), and the password
// of -u/--user user:pass.
func redactFields(s string, counts map[string]int) string {
	locs := fields(s)
	if len(locs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	replace := func(from, to int) {
		b.WriteString(s[last:from])
		b.WriteString(redacted)
		last = to
		counts["secret-value"]++
	}
	for i, loc := range locs {
		if loc[0] < last {
			continue
		}
		w := s[loc[0]:loc[1]]
		name, value, eq := strings.Cut(w, "=")
		flag := strings.HasPrefix(w, "-")
		switch {
		case eq && value != "" && value != redacted && !pathLike(value) && validName(name) && secretName(name):
			replace(loc[0]+len(name)+1, loc[1])
		case !eq && flag && len(w) > 3 && secretName(w) && i+1 < len(locs):
			next := s[locs[i+1][0]:locs[i+1][1]]
			if !strings.HasPrefix(next, "-") && next != redacted && !pathLike(next) {
				b.WriteString(s[last:locs[i+1][0]])
				last = locs[i+1][0]
				replace(locs[i+1][0], locs[i+1][1])
			}
		case !eq && strings.HasPrefix(w, "-p") && len(w) > 2 && !shortFlagWord[w[1:]] && strings.Trim(w[2:], "0123456789") != "":
			replace(loc[0]+2, loc[1])
		case (w == "-u" || w == "--user") && i+1 < len(locs):
			next := s[locs[i+1][0]:locs[i+1][1]]
			if user, _, ok := strings.Cut(next, ":"); ok {
				b.WriteString(s[last:locs[i+1][0]])
				last = locs[i+1][0]
				replace(locs[i+1][0]+len(user)+1, locs[i+1][1])
			}
		case strings.HasPrefix(w, "-u") && len(w) > 2 && strings.Contains(w, ":"):
			user, _, _ := strings.Cut(w[2:], ":")
			replace(loc[0]+2+len(user)+1, loc[1])
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// fields are the [start, end) of each run of s that is not white space
// (\S+: space, \t, \n, \f, \r separate), as regexp's FindAllStringIndex
// would give them, without its cost.
func fields(s string) [][]int {
	var out [][]int
	start := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\f', '\r':
			if start >= 0 {
				out = append(out, []int{start, i})
				start = -1
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, []int{start, len(s)})
	}
	return out
}

// shortFlagWord are single-dash words that start with -p and are no
// password: find's, the compilers'.
var shortFlagWord = map[string]bool{"print": true, "print0": true, "printf": true, "path": true, "perm": true, "prune": true,
	"pthread": true, "pedantic": true, "pipe": true, "pie": true, "pg": true, "pid": true, "ppid": true}

// validName reports whether name is a flag or variable name (--db-pass,
// DB_PASSWORD), not any word with an '=' in it.
func validName(name string) bool {
	name = strings.TrimLeft(name, "-")
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
