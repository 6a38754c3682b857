package audit

import (
	"strings"
	"testing"
)

// Redaction by the shape of secrets: each secret form is taken out and
// counted, each control stays byte for byte (issue 51, attack 5b: 11 of
// 14 common forms reached the bundle verbatim before).
func TestRedactString(t *testing.T) {
	for _, tt := range []struct{ in, secret, kind string }{
		// Secret-named flags and variables, in every form.
		{"node server.js --api-key abcd1234efgh", "abcd1234efgh", "secret-value"},
		{"node server.js --api-key=abcd1234efgh", "abcd1234efgh", "secret-value"},
		{"OPENAI_API_KEY=sk-proj-Zq81fJ2kLmN0pQr5", "Zq81fJ2kLmN0pQr5", "api-key"},
		{"DB_PASSWORD=hunter2 node app.js", "hunter2", "secret-value"},
		{"mysql -uroot -pS3cretPw db", "S3cretPw", "secret-value"},
		{"server --db-pass=correcthorse", "correcthorse", "secret-value"},
		{"server --key Zx81kLm0", "Zx81kLm0", "secret-value"},
		{"server --pass hunter22", "hunter22", "secret-value"},
		{"server --password 'two words'", "'two", "secret-value"},
		{"server -token abc123xyz", "abc123xyz", "secret-value"},
		{"app --clientSecret=qwe987rty", "qwe987rty", "secret-value"},
		{"app --access-token 0123456789abcdef", "0123456789abcdef", "secret-value"},
		{"app --auth s3ss10n-v4lue", "s3ss10n-v4lue", "secret-value"},
		{"app --credentials user:pw12345", "pw12345", "secret-value"},
		{"app --cookie sid=abcdef123456", "abcdef123456", "secret-value"},
		{"app --session 8f9e7d6c5b4a", "8f9e7d6c5b4a", "secret-value"},
		{"PGPASSWORD=pgpass99 psql", "pgpass99", "secret-value"},
		{"export GITHUB_TOKEN=plainvalue99", "plainvalue99", "secret-value"},
		{"app --pwd=letmein1", "letmein1", "secret-value"},
		{`{"token": "tok_live_998877"}`, "tok_live_998877", "secret-value"},
		{`{"apiKey":"k-112233445566"}`, "k-112233445566", "secret-value"},
		// Headers, in any scheme.
		{"curl -H 'Authorization: Bearer abc.def.ghi1234567'", "abc.def.ghi1234567", "header"},
		{"curl -H 'Authorization: Basic dXNlcjpwYXNz'", "dXNlcjpwYXNz", "header"},
		{"curl -H 'Authorization: token 0a1b2c3d4e'", "0a1b2c3d4e", "header"},
		{"curl -H \"X-Auth-Token: V4lueOfToken\" x", "V4lueOfToken", "header"},
		{"curl -H 'X-Api-Key: 99887766aabb'", "99887766aabb", "header"},
		{"curl -H 'Cookie: session=abc; theme=dark'", "session=abc", "header"},
		{"curl -H 'Proxy-Authorization: Basic cHJveHk6cHc='", "cHJveHk6cHc=", "header"},
		// URL userinfo, however written.
		{"git push https://bob:s3cretpass@github.com/x", "s3cretpass", "url-password"},
		{"psql postgres://app:p@ss@w0rd@db.internal:5432/app", "p@ss@w0rd", "url-password"},
		{"git clone https://x-access-token:ghs_AbCdEf@github.com/o/r", "ghs_AbCdEf", "url-password"},
		{"git clone https://oauth2tokenvalue1234@gitlab.com/o/r", "oauth2tokenvalue1234", "url-password"},
		{"curl -u alice:wonderland https://api", "wonderland", "secret-value"},
		// Tokens by their issuer's prefix.
		{"uses sk-ant-api03-AbCdEfGh12345678 inline", "sk-ant-api03-AbCdEfGh12345678", "api-key"},
		{"clone with ghp_4bC6dE8fG0hI2jK4lM6nO8pQ0rS2tU4v", "ghp_4bC6dE8fG0hI2jK4lM6nO8pQ0rS2tU4v", "github-token"},
		{"token github_pat_11ABCDEFG0123456789_abcdefghij", "github_pat_11ABCDEFG0123456789_abcdefghij", "github-token"},
		{"glpat-AbCdEfGhIjKlMnOpQrSt in a line", "glpat-AbCdEfGhIjKlMnOpQrSt", "gitlab-token"},
		{"model hf_AbCdEfGhIjKlMnOpQrStUvWx", "hf_AbCdEfGhIjKlMnOpQrStUvWx", "api-key"},
		{"slack xoxb-1234567890-abcdef", "xoxb-1234567890-abcdef", "slack-token"},
		{"post https://hooks.slack.com/services/T000/B000/XXXXyyyyZZZZ", "XXXXyyyyZZZZ", "webhook"},
		{"post https://discord.com/api/webhooks/123456/AbC-dEf_gHi", "AbC-dEf_gHi", "webhook"},
		{"AKIAABCDEFGHIJKLMNOP in a line", "AKIAABCDEFGHIJKLMNOP", "aws-key"},
		{"jwt eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", "jwt"},
	} {
		counts := map[string]int{}
		out := RedactString(tt.in, nil, counts)
		if strings.Contains(out, tt.secret) || counts[tt.kind] == 0 {
			t.Errorf("%q → %q (counts %v): want %s taken out as %s", tt.in, out, counts, tt.secret, tt.kind)
		}
	}
	// The controls: nothing here is a secret, and each stays as it is.
	for _, plain := range []string{
		"npm exec mcp-remote https://example.com/mcp --port 8080",
		"node server.js --keep-alive 30 --verbose",
		"claude --session-dir /tmp/x --resume",
		"app --session-id 5f0c1d2e-aaaa-bbbb-cccc-0123456789ab",
		"app --token-file /run/secrets/token --auth-url https://id.example.com/auth",
		"ssh-agent --key /home/ann/.ssh/id_ed25519",
		"psql -p5432 -h localhost",
		"find . -print -path x -perm 644",
		"gcc -pthread -pedantic main.c",
		"git clone ssh://git@github.com/o/r.git",
		"node dist/index.js --author Ann --keyword mcp",
		`{"name": "server", "sessionId": "abc", "authorName": "Ann"}`,
		"PATH=/usr/bin:/bin HOME=/home/ann LANG=C.UTF-8",
		"uvx mcp-server-fetch --user-agent reaper",
	} {
		counts := map[string]int{}
		if out := RedactString(plain, nil, counts); out != plain || len(counts) != 0 {
			t.Errorf("control: %q → %q (%v)", plain, out, counts)
		}
	}
	counts := map[string]int{}
	plain := "npm exec mcp-remote https://example.com/mcp --port 8080 /home/ann/work"
	if out := RedactString(plain, []string{"/home/ann"}, counts); out != "npm exec mcp-remote https://example.com/mcp --port 8080 ~/work" || len(counts) != 1 || counts["home"] != 1 {
		t.Errorf("control: %q → %q (%v)", plain, out, counts)
	}
}
