#!/bin/sh
# hugepages.sh — reserve 2 MiB hugepages and mount hugetlbfs for X-IO (the
# onvm manager's DPDK memory). Run as root; idempotent.
#   deploy/hugepages.sh [PAGES]   (default 512 = 1 GiB)
# The manager takes 160 MiB by default (onvm.Config.MemMB); every test or
# benchmark run starts its own manager, so leave headroom.
set -eu
PAGES="${1:-512}"
MNT=/dev/hugepages

if [ "$(id -u)" -ne 0 ]; then
	echo "hugepages.sh: needs root (writes /proc/sys/vm/nr_hugepages, mounts $MNT)" >&2
	exit 1
fi

current=$(cat /proc/sys/vm/nr_hugepages)
if [ "$current" -lt "$PAGES" ]; then
	echo "$PAGES" > /proc/sys/vm/nr_hugepages
fi
got=$(cat /proc/sys/vm/nr_hugepages)
if [ "$got" -lt "$PAGES" ]; then
	echo "hugepages.sh: asked for $PAGES hugepages, the kernel gave $got (memory fragmented? reboot or ask for fewer)" >&2
	exit 1
fi

if ! grep -qs " $MNT hugetlbfs " /proc/mounts; then
	mkdir -p "$MNT"
	mount -t hugetlbfs nodev "$MNT"
fi
grep -E 'HugePages_(Total|Free)' /proc/meminfo
