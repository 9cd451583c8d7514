# L25GC+ — the two commands a user needs: `make run` and `make test`.
# Both install what is missing (Debian packages), build, and go.

GO      ?= go
# install-deps.sh puts Go in /usr/local/go when none is on the PATH.
export PATH := $(PATH):/usr/local/go/bin
BIN     := bin/l25gc
CONFIG  ?=
SBI     ?=
# Fuzz each decoder briefly in `make test`; raise for a real campaign.
FUZZTIME ?= 8s
# Test-only code (X-IO's test hooks: xio/testhooks.go, testhooks.c and the
# hooks in xio/stack.c) is built only with this tag. Tests set it; `make
# build` never does, so bin/l25gc carries none of it.
TESTTAGS := l25gc_testhooks
# Go's build cache keys a cgo package by its own files, not by the headers it
# includes from other directories: onvm/include (the shared-memory header
# tree) and qos/ (the QoS fast path UPF-U compiles in). A digest of them in
# the C flags makes every make target rebuild xio, onvm and upf/u when such
# a header changes, instead of linking a stale object.
SHM_DIGEST := $(shell cat onvm/include/*.h qos/*.h | sha256sum | cut -c1-16)
export CGO_CFLAGS := -O2 -g -DL25GC_SHM_DIGEST=$(SHM_DIGEST)

PREFIX  ?= /usr/local

.PHONY: all deps build run test unit e2e fuzz vet vm clean install uninstall

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(GO) build -o $(BIN) ./cmd/l25gc

run: build
	$(BIN) up $(if $(CONFIG),--config $(CONFIG)) $(if $(SBI),--sbi $(SBI))

test: build vet unit fuzz e2e
	@echo "make test: all suites passed"

# Twice: the production build, and the test build with its hooks.
vet:
	$(GO) vet ./...
	$(GO) vet -tags $(TESTTAGS) ./...

# Unit and integration tests of every package except the end-to-end suite;
# the packages that start DPDK processes run one at a time (scripts/unit.sh
# says why).
unit:
	@GO=$(GO) TESTTAGS=$(TESTTAGS) scripts/unit.sh

# Only the tests that boot a VM whose kernel has SCTP (make unit runs them too).
vm: deps
	$(GO) test -count=1 -v ./test/vm/...

# The whole core as separate processes, driven by the simulator. The suite
# takes about 11 minutes on a loaded 2-core machine; the timeout leaves a
# slower CI machine room, and a run that reaches it ends naming the tests
# still running (test/e2e/summary_test.go).
e2e: build
	L25GC_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 45m ./test/e2e/...

fuzz:
	@scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin run

# Installs the binary, the hugepage script, a config (kept if present) and
# the systemd unit: `systemctl enable --now l25gc` then runs the core.
install: build
	install -D -m 0755 $(BIN) $(PREFIX)/bin/l25gc
	install -D -m 0755 deploy/hugepages.sh $(PREFIX)/lib/l25gc/hugepages.sh
	install -D -m 0644 README.md $(PREFIX)/share/doc/l25gc/README.md
	test -e /etc/l25gc/l25gc.yaml || install -D -m 0644 deploy/config/l25gc.yaml /etc/l25gc/l25gc.yaml
	install -D -m 0644 deploy/systemd/l25gc.service /etc/systemd/system/l25gc.service
	-systemctl daemon-reload 2>/dev/null
	@echo "installed; start with: systemctl enable --now l25gc (config: /etc/l25gc/l25gc.yaml)"

uninstall:
	-systemctl disable --now l25gc 2>/dev/null
	rm -f $(PREFIX)/bin/l25gc /etc/systemd/system/l25gc.service
	rm -rf $(PREFIX)/lib/l25gc $(PREFIX)/share/doc/l25gc
	@echo "kept /etc/l25gc and /var/lib/l25gc (config, subscribers)"
