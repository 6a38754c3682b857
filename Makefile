# reaper's build: the binary, its man pages and completions, its packages.
# The tests are `go test -count=1 ./...` (see README); CI is .ci/run.

VERSION ?= $(shell scripts/version.sh 2>/dev/null || echo 0.0.0)
ARCH    ?= amd64
# goreleaser v2.16.0: the last release whose go.mod this Go (1.26.8)
# accepts and whose modules the proxy serves in full.
GORELEASER := github.com/goreleaser/goreleaser/v2@v2.16.0

.PHONY: build docs packages release clean

build:
	mkdir -p dist
	CGO_ENABLED=0 GOARCH=$(ARCH) go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o dist/reaper ./cmd/reaper

# Man pages and completions come from the command tree itself.
docs:
	rm -rf dist/man dist/man5 dist/completions
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || date +%s) go run -tags docs -ldflags "-X main.version=$(VERSION)" ./cmd/reaper gen-docs --man dist/man --completions dist/completions
	gzip -9n dist/man/*.1
	mkdir -p dist/man5 && gzip -9nc packaging/man/reaper.toml.5 >dist/man5/reaper.toml.5.gz

# Archives, checksums, .deb, .rpm and the Homebrew formula of this commit,
# under dist/release (.goreleaser.yaml); nothing is published.
packages:
	VERSION=$(VERSION) go run $(GORELEASER) release --snapshot --clean

# A release of the tag at HEAD (vX.Y.Z), published by goreleaser.
release:
	go run $(GORELEASER) release --clean

clean:
	rm -rf dist
