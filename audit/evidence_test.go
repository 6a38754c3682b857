package audit

import (
	"strings"
	"testing"
)

// Each kind of secret is taken out of a string and counted; text with
// none is left as it is (the control), and a home becomes ~.
func TestRedactString(t *testing.T) {
	for _, tt := range []struct{ in, secret, kind string }{
		{"node server.js --api-key abcd1234efgh", "abcd1234efgh", "secret-value"},
		{"OPENAI_API_KEY=sk-proj-Zq81fJ2kLmN0pQr5", "sk-proj-Zq81fJ2kLmN0pQr5", "secret-value"},
		{"uses sk-ant-api03-AbCdEfGh12345678 inline", "sk-ant-api03-AbCdEfGh12345678", "api-key"},
		{"git push https://bob:s3cretpass@github.com/x", "s3cretpass", "url-password"},
		{"curl -H 'Authorization: Bearer abc.def.ghi1234567'", "abc.def.ghi1234567", "bearer"},
		{"clone with ghp_4bC6dE8fG0hI2jK4lM6nO8pQ0rS2tU4v", "ghp_4bC6dE8fG0hI2jK4lM6nO8pQ0rS2tU4v", "github-token"},
		{"slack xoxb-1234567890-abcdef", "xoxb-1234567890-abcdef", "slack-token"},
		{"AKIAABCDEFGHIJKLMNOP in a line", "AKIAABCDEFGHIJKLMNOP", "aws-key"},
		{`{"token": "tok_live_998877"}`, "tok_live_998877", "secret-value"},
	} {
		counts := map[string]int{}
		out := RedactString(tt.in, nil, counts)
		if strings.Contains(out, tt.secret) || counts[tt.kind] == 0 {
			t.Errorf("%q → %q (counts %v): want %s taken out as %s", tt.in, out, counts, tt.secret, tt.kind)
		}
	}
	counts := map[string]int{}
	plain := "npm exec mcp-remote https://example.com/mcp --port 8080 /home/ann/work"
	if out := RedactString(plain, []string{"/home/ann"}, counts); out != "npm exec mcp-remote https://example.com/mcp --port 8080 ~/work" || len(counts) != 1 || counts["home"] != 1 {
		t.Errorf("control: %q → %q (%v)", plain, out, counts)
	}
}
