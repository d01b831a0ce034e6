GO ?= go
ENGINE ?= portable

.PHONY: build test e2e e2e-probe

build:
	$(GO) build ./...

test:
	$(GO) vet ./... && $(GO) test -race ./...

# e2e: real Linux 6.12 NFS client in qemu (TCG) against the server on
# 127.0.0.1 (vers=4.2 with READ_PLUS, then 4.1). See e2e/kernel/run.sh.
e2e:
	ENGINE=$(ENGINE) bash e2e/kernel/e2e.sh

# e2e-probe: boot the guest and check the guestfwd path, no server needed.
e2e-probe:
	bash e2e/kernel/probe.sh
