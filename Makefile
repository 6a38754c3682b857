# reaper's build: the binary, its man pages and completions, its packages.
# The tests are `go test -count=1 ./...` (see README); CI is .ci/run.

VERSION ?= $(shell scripts/version.sh 2>/dev/null || echo 0.0.0)
ARCH    ?= amd64
NFPM    := github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2

.PHONY: build docs packages clean

build:
	mkdir -p dist
	CGO_ENABLED=0 GOARCH=$(ARCH) go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o dist/reaper ./cmd/reaper

# Man pages and completions come from the command tree itself.
docs:
	rm -rf dist/man dist/man5 dist/completions
	go run -tags docs -ldflags "-X main.version=$(VERSION)" ./cmd/reaper gen-docs --man dist/man --completions dist/completions
	gzip -9n dist/man/*.1
	mkdir -p dist/man5 && gzip -9nc packaging/man/reaper.toml.5 >dist/man5/reaper.toml.5.gz

# .deb and .rpm, built offline by nfpm from the Go module proxy.
packages: build docs
	VERSION=$(VERSION) ARCH=$(ARCH) go run $(NFPM) package --config packaging/nfpm.yaml --packager deb --target dist/
	VERSION=$(VERSION) ARCH=$(ARCH) go run $(NFPM) package --config packaging/nfpm.yaml --packager rpm --target dist/

clean:
	rm -rf dist
