#!/usr/bin/env bash
# Runs the unit and integration tests of every package except the
# end-to-end suite (make unit), in two groups:
#
#   - packages whose tests start DPDK processes (an onvm manager, UPF-U):
#     their tests import xio/xioproc, onvm or upf/u. They run one package
#     at a time (-p 1). Each takes 2 MiB hugepages from one machine-wide
#     pool and checks what is free before its EAL starts; two such
#     packages side by side race between the check and the start, and
#     xio's TestManagerStartsBesideReservedHugepages holds all but 40 free
#     pages on purpose while it runs. CI (512 pages, 2 cores, `go test`
#     running two packages at once) saw stop 11's managers find too few
#     pages beside another package's DPDK process.
#   - every other package, as `go test` schedules them (-p = cores).
#
# Both groups always run; the script fails if either did, so a red run
# names every failing package. Extra arguments go to both `go test`s.
set -uo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
tags=${TESTTAGS:-l25gc_testhooks}

# A package is in the DPDK group when its tests import one of these.
dpdk_imports='github.com/l25gc/l25gc/(xio/xioproc|onvm|upf/u)$'

mapfile -t lines < <($go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./...)
dpdk=()
other=()
for line in "${lines[@]}"; do
	read -r pkg imports <<<"$line"
	case $pkg in */test/e2e | */test/e2e/*) continue ;; esac
	if tr ' ' '\n' <<<"$imports" | grep -qE "$dpdk_imports"; then
		dpdk+=("$pkg")
	else
		other+=("$pkg")
	fi
done

# go test's default bound is 10 minutes per package. test/vm boots
# TCG VMs (up to 5 minutes each, test/vm Timeout) and took 4.5 minutes on
# one shared core here; a slower CI machine running a second package
# beside it comes near the default, which would fail a passing package.
timeout=25m

status=0
echo "unit: ${#other[@]} packages"
$go test -race -count=1 -timeout $timeout -tags "$tags" "$@" "${other[@]}" || status=1
echo "unit: ${#dpdk[@]} packages that start DPDK processes, one at a time"
$go test -p 1 -race -count=1 -timeout $timeout -tags "$tags" "$@" "${dpdk[@]}" || status=1
if [ $status -ne 0 ]; then
	echo "unit: FAILED (see the FAIL lines above)"
fi
exit $status
