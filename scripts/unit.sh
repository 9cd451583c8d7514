#!/usr/bin/env bash
# Runs the unit and integration tests of every package except the
# end-to-end suite (make unit) in two lanes side by side, one package at a
# time in each (two at once in all, as `go test -p 2` on CI's 2 cores):
#
#   - the packages whose tests start DPDK processes (an onvm manager,
#     UPF-U): their tests import xio/xioproc, onvm, upf/u or sbi/sbitest
#     (whose Main starts a manager for every NF package). Each takes 2 MiB
#     hugepages from one machine-wide pool and checks what is free before
#     its EAL starts; two such packages side by side race between the check
#     and the start, and xio's TestManagerStartsBesideReservedHugepages holds
#     all but 40 free pages on purpose while it runs. CI (512 pages, `go
#     test` running any two packages at once) saw stop 11's managers find
#     too few pages beside another package's DPDK process. In this lane they
#     never overlap.
#   - every other package (test/vm, the longest, among them: the lanes took
#     ~270 s and ~345 s of tests here).
#
# The second lane's output is kept until it ends (so two packages' output
# never interleaves), then every FAIL line of both is repeated last: a CI
# log that keeps only its tail still names them. Extra arguments go to both
# `go test`s.
set -uo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
tags=${TESTTAGS:-l25gc_testhooks}

# A package is in the DPDK lane when its tests import one of these.
dpdk_imports='github.com/l25gc/l25gc/(xio/xioproc|onvm|upf/u|sbi/sbitest)$'

mapfile -t lines < <($go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./...)
dpdk=()
other=()
for line in "${lines[@]}"; do
	read -r pkg imports <<<"$line"
	case $pkg in */test/e2e | */test/e2e/*) continue ;; esac
	if tr ' ' '\n' <<<"$pkg $imports" | grep -qE "$dpdk_imports"; then
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
other_pid=
other_log=$(mktemp)
dpdk_log=$(mktemp)
trap '[ -n "$other_pid" ] && kill "$other_pid" 2>/dev/null; rm -f "$other_log" "$dpdk_log"' EXIT
echo "unit: ${#dpdk[@]} packages that start DPDK processes one at a time, beside ${#other[@]} others"
$go test -p 1 -race -count=1 -timeout $timeout -tags "$tags" "$@" "${other[@]}" >"$other_log" 2>&1 &
other_pid=$!
$go test -p 1 -race -count=1 -timeout $timeout -tags "$tags" "$@" "${dpdk[@]}" 2>&1 | tee "$dpdk_log" || status=1
wait "$other_pid" || status=1
other_pid=
cat "$other_log"
if [ $status -ne 0 ]; then
	echo "unit: FAILED:"
	grep -hE '^(FAIL|--- FAIL|panic:)' "$dpdk_log" "$other_log"
fi
exit $status
