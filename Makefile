# hrsync — developer entry points. `make help` lists them.
SHELL := bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN := bin/hrsync

# Test servers on loopback (PostgreSQL and MariaDB); override to point elsewhere.
export HRSYNC_TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
export HRSYNC_TEST_MYSQL_DSN ?= root@tcp(127.0.0.1:3306)/test?parseTime=true

# Servers the tests start besides PostgreSQL and MariaDB: `make test-deps` (tools/test-deps.sh) installs
# the Debian packages they need and builds versitygw (S3) and mailpit (SMTP), pinned, into bin/tools.
# Point these elsewhere to use other builds.
export HRSYNC_TEST_VERSITYGW ?= $(CURDIR)/bin/tools/versitygw
export HRSYNC_TEST_MAILPIT ?= $(CURDIR)/bin/tools/mailpit

# Tools are pinned as Go tool dependencies: oapi-codegen in go.mod, golangci-lint and kube-score in
# tools/go.mod.
GOLANGCI_LINT := $(GO) tool -modfile=tools/go.mod golangci-lint
KUBE_SCORE := $(GO) tool -modfile=tools/go.mod kube-score

REDOCLY_CLI ?= @redocly/cli@2.77.0

.PHONY: help build test test-deps test-short lint lint-api generate verify bench bench-quick demo emulator clean fuzz manifests soak-grants kube-score image test-db

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build the static binary into bin/hrsync
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/hrsync

test: test-deps test-db ## run every test with the race detector (needs PostgreSQL and MariaDB on loopback)
	$(GO) test -race -count=1 -timeout 15m ./...

test-deps: ## install what the tests start: sshd, promtool, Pushgateway, Chromium, podman, buildah (apt, as root); versitygw, mailpit
	@bash tools/test-deps.sh

test-short: ## run the tests without the race detector
	$(GO) test -count=1 ./...

lint: ## gofmt, go vet and golangci-lint
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GOLANGCI_LINT) run --allow-parallel-runners ./...

lint-api: ## lint api/openapi.yaml with an independent OpenAPI linter (Redocly CLI, from npm)
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx --yes $(REDOCLY_CLI) lint --config redocly.yaml api/openapi.yaml

generate: ## regenerate the OpenAPI client and server from api/openapi.yaml
	$(GO) generate ./...

verify: ## generated code is fresh and go.mod is tidy
	$(GO) generate ./...
	$(GO) mod tidy
	cd tools && $(GO) mod tidy
	@git diff --exit-code -- api go.mod go.sum tools/go.mod tools/go.sum deploy/prometheus/prometheusrule.yaml || { echo "generated code or go.mod is stale: run 'make generate' and 'go mod tidy'"; exit 1; }

# make bench measures at the issues' sizes: 100,000 orders with 300,000 line items ingested, 10,000 order
# statuses polled (plain `go test -bench` keeps the small defaults).
bench: export HRSYNC_BENCH_ORDERS ?= 100000
bench: export HRSYNC_BENCH_POLL_ORDERS ?= 10000
bench: build ## run the go test benchmarks, then the people-sync harness on 1,000,000 rows (docs/benchmarks.md)
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) build -o bin/peoplebench ./cmd/peoplebench
	bin/peoplebench -rows 1000000 -hrsync $(BIN)

bench-quick: build ## the people-sync harness alone, on 100,000 rows, one run per store
	$(GO) build -o bin/peoplebench ./cmd/peoplebench
	bin/peoplebench -rows 100000 -repeat 1 -hrsync $(BIN)

soak-grants: ## the grants crash year on every day of 2025 for 1,000 people, both stores (a few minutes)
	HRSYNC_GRANTS_SOAK=1 $(GO) test -count=1 -timeout 30m -run 'TestCrashGrants' ./cmd/hrsync

fuzz: ## run each fuzz target for a short while (FUZZTIME=30s)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-30s} $$pkg || exit 1; \
	  done; \
	done

emulator: build ## start the platform emulator on 127.0.0.1:8080 with the token demo-token
	$(BIN) emulator --listen 127.0.0.1:8080 --token demo-token

DEMO_TOKEN ?= demo-token
DEMO_ADDR ?= 127.0.0.1:8080

demo: build ## start the emulator on DEMO_ADDR (must be free), run a full cycle on the sample export with the SQLite store, print the summary
	BIN=$(BIN) DEMO_TOKEN=$(DEMO_TOKEN) DEMO_ADDR=$(DEMO_ADDR) bash examples/demo.sh

# make manifests renders each Kubernetes overlay with the image tagged VERSION (a release:
# `make manifests VERSION=v1.2.3`), through a kustomization of its own beside the output that
# names the overlay by a relative path (kustomize refuses absolute ones).
MANIFESTS ?= bin/manifests
KUBECTL ?= kubectl
OVERLAYS := sqlite-single postgres-fleet

manifests: ## render deploy/kubernetes/overlays/* with the image tag VERSION into MANIFESTS (bin/manifests)
	@set -e; for o in $(OVERLAYS); do \
	  k=$(MANIFESTS)/.kustomize/$$o; mkdir -p $$k; \
	  printf 'resources:\n  - %s\nimages:\n  - name: ghcr.io/example/hrsync\n    newTag: "%s"\n' \
	    "$$(realpath --relative-to=$$k deploy/kubernetes/overlays/$$o)" "$(VERSION)" >$$k/kustomization.yaml; \
	  $(KUBECTL) kustomize $$k >$(MANIFESTS)/$$o.yaml; \
	  echo "$(MANIFESTS)/$$o.yaml (image tag $(VERSION))"; \
	done; rm -rf $(MANIFESTS)/.kustomize

# make kube-score renders each overlay and scores it with kube-score's default checks; a warning
# fails like a critical finding. An exception is a kube-score/ignore annotation in the manifest,
# with the reason in a comment above it (deploy/kubernetes checks there is one).
kube-score: ## score the rendered Kubernetes overlays with kube-score (pinned in tools/go.mod)
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for o in $(OVERLAYS); do \
	  $(KUBECTL) kustomize deploy/kubernetes/overlays/$$o >$$tmp/$$o.yaml; \
	  if out=$$($(KUBE_SCORE) score --output-format ci --exit-one-on-warning $$tmp/$$o.yaml); then \
	    echo "kube-score $$o: ok"; \
	  else \
	    echo "$$out" | grep -v -E '^\[(OK|SKIPPED)\]'; echo "kube-score $$o: FAILED"; exit 1; \
	  fi; \
	done

# make image builds the container image without pulling anything (tools/image.sh): the static binary,
# the CA bundle and time zones of this machine, and user 65532, over scratch, with buildah. The
# Dockerfile is the reference build; this one has the same content and metadata.
IMAGE ?= localhost/hrsync:$(VERSION)
image: ## build the container image IMAGE with buildah, from scratch, no registry (tools/image.sh)
	@VERSION=$(VERSION) IMAGE=$(IMAGE) bash tools/image.sh

test-db: ## create the test databases (PostgreSQL and MariaDB "test") on loopback, if missing
	@bash tools/test-db.sh

clean: ## remove build output
	rm -rf bin
