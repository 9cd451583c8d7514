# L25GC+ — the two commands a user needs: `make run` and `make test`.
# Both install what is missing (Debian packages), build, and go.

GO      ?= go
# install-deps.sh puts Go in /usr/local/go when none is on the PATH.
export PATH := $(PATH):/usr/local/go/bin
BIN     := bin/l25gc
CONFIG  ?=
SBI     ?=
# Fuzz each decoder briefly in `make test`; raise for a real campaign.
FUZZTIME ?= 10s

.PHONY: all deps build run test unit e2e fuzz vet clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(GO) build -o $(BIN) ./cmd/l25gc

run: build
	$(BIN) up $(if $(CONFIG),--config $(CONFIG)) $(if $(SBI),--sbi $(SBI))

test: build vet unit fuzz e2e
	@echo "make test: all suites passed"

vet:
	$(GO) vet ./...

# Unit and integration tests of every package except the end-to-end suite.
unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /test/e2e)

# The whole core as separate processes, driven by the simulator.
e2e: build
	L25GC_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 20m ./test/e2e/...

fuzz:
	@scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin run
