#!/usr/bin/env bash
# Install the host packages and fetch/unpack the guest kernel into the cache
# (apt-get download + dpkg-deb -x + depmod), without booting anything.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_host_deps
e2e_kernel
e2e_log "ready: $E2E_VMLINUZ (modules under $E2E_KROOT/lib/modules/$E2E_KVER)"
