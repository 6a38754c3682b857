# reaper's build: the binary, its man pages and completions, its packages;
# and the checks a contributor runs before sending a change (CONTRIBUTING.md).
# The tests are `go test -count=1 ./...` (see README); CI is .ci/run, which
# calls `make check` and `make fuzz` too.

VERSION ?= $(shell scripts/version.sh 2>/dev/null || echo 0.0.0)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
ARCH    ?= amd64
# goreleaser v2.16.0: the last release whose go.mod this Go (1.26.8)
# accepts and whose modules the proxy serves in full.
GORELEASER := github.com/goreleaser/goreleaser/v2@v2.16.0

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build check test fuzz docs packages release clean e2e-deps

# The quick checks, for any user: formatting, vet and staticcheck on Linux
# and darwin, the darwin, freebsd and windows builds and the windows vet,
# tests included (no cgo: a port breaks in platform's fallbacks, never in
# a package above), the darwin test binaries compiled, and the library
# packages' tests (those that need root skip without it; cmd/reaper's,
# which build and run the binary, are in `make test`).
check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	GOOS=darwin GOARCH=amd64 go vet ./...
	GOOS=darwin GOARCH=arm64 go vet ./...
	CGO_ENABLED=0 go build -o /dev/null ./cmd/reaper
	for arch in amd64 arm64; do CGO_ENABLED=0 GOOS=darwin GOARCH=$$arch go build ./... || exit 1; \
		CGO_ENABLED=0 GOOS=darwin GOARCH=$$arch go test -exec=true -count=1 ./... >/dev/null || exit 1; done
	CGO_ENABLED=0 GOOS=freebsd GOARCH=amd64 go build ./...
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go build ./...
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go vet ./...
	GOOS= GOARCH= go install $(STATICCHECK)
	"$$(go env GOPATH)/bin/staticcheck" ./...
	GOOS=darwin "$$(go env GOPATH)/bin/staticcheck" ./...
	go test -count=1 $$(go list ./... | grep -v '/cmd/')

# Every test: as root also the other-user, cgroup and PID-namespace ones.
test:
	go test -count=1 ./...

# Every fuzz target, found by `go test -list` (scripts/fuzz.sh).
fuzz:
	scripts/fuzz.sh

# The Node packages of the end-to-end gateway (testdata/e2e), from its
# committed lockfile: the e2e tests skip without them and never fetch them.
e2e-deps:
	cd testdata/e2e && npm ci --no-audit --no-fund --silent

build:
	mkdir -p dist
	CGO_ENABLED=0 GOARCH=$(ARCH) go build -trimpath -buildvcs=auto -ldflags "-s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o dist/reaper ./cmd/reaper

# Man pages and completions come from the command tree itself.
docs:
	rm -rf dist/man dist/man5 dist/completions
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || date +%s) go run -tags docs -ldflags "-X main.version=$(VERSION)" ./cmd/reaper gen-docs --man dist/man --completions dist/completions
	gzip -9n dist/man/*.1
	mkdir -p dist/man5 && gzip -9nc packaging/man/reaper.toml.5 >dist/man5/reaper.toml.5.gz

# Archives, checksums, .deb, .rpm and the Homebrew formula of this commit,
# under dist/release (.goreleaser.yaml); nothing is published.
packages:
	VERSION=$(VERSION) COMMIT=$(COMMIT) go run $(GORELEASER) release --snapshot --clean
	mkdir -p dist/release/homebrew/Formula
	scripts/brew-formula.sh $(VERSION) dist/release >dist/release/homebrew/Formula/reaper.rb
	mkdir -p dist/release/scoop
	scripts/scoop-manifest.sh $(VERSION) dist/release >dist/release/scoop/reaper.json

# A release of the tag at HEAD (vX.Y.Z), published by goreleaser.
# The formula goes to the tap (orphanreaper/homebrew-tap) by hand.
release:
	COMMIT=$(COMMIT) go run $(GORELEASER) release --clean
	mkdir -p dist/release/homebrew/Formula
	scripts/brew-formula.sh $$(git describe --tags --exact-match | sed 's/^v//') dist/release >dist/release/homebrew/Formula/reaper.rb
	mkdir -p dist/release/scoop
	scripts/scoop-manifest.sh $$(git describe --tags --exact-match | sed 's/^v//') dist/release >dist/release/scoop/reaper.json

clean:
	rm -rf dist
