package all

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/policy"
)

// The policy examples in docs/policy.md load with the shipped clients:
// each ```toml block, with `version = 1` where it has none. A key renamed
// in the code and not in the docs fails here.
func TestDocExamplesLoad(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), "```toml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("%d toml blocks in docs/policy.md", len(blocks))
	}
	for i, blk := range blocks {
		blk, _, _ = strings.Cut(blk, "```")
		if !strings.Contains(blk, "version =") {
			blk = "version = 1\n" + blk
		}
		if _, err := policy.Parse(fmt.Sprintf("docs/policy.md block %d", i+1), []byte(blk), clients); err != nil {
			t.Errorf("%v\n%s", err, blk)
		}
	}
}
