#!/usr/bin/env bash
# Installs what L25GC+ needs on Debian 12 when it is missing. Idempotent and
# quiet when everything is there; run as root (make run / make test call it).
set -euo pipefail

need_pkgs=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# qemu-system-x86 and busybox-static boot the VM whose kernel has SCTP (test/vm).
# iputils-ping and iperf3 drive traffic through a PDU session (test/e2e, README).
for p in pkg-config libdpdk-dev tshark iproute2 procps qemu-system-x86 busybox-static iputils-ping iperf3; do
	have "$p" || need_pkgs+=("$p")
done

if [ ${#need_pkgs[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: missing ${need_pkgs[*]}; run as root or: apt-get install ${need_pkgs[*]}" >&2
		exit 1
	fi
	echo "install-deps: installing ${need_pkgs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# tshark asks whether non-root users may capture; the answer does not matter here.
	echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

# Go: the version go.mod names, from the Go module proxy (the toolchain
# module Go itself switches to) when no Go is on the PATH. Debian 12's
# golang-go (1.19) is too old and cannot switch toolchains by itself.
if ! command -v go >/dev/null && [ ! -x /usr/local/go/bin/go ]; then
	gover=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$(dirname "$0")/../go.mod")
	proxy=${GOPROXY:-https://proxy.golang.org}; proxy=${proxy%%,*}
	url="$proxy/golang.org/toolchain/@v/v0.0.1-go${gover}.linux-amd64.zip"
	echo "install-deps: no Go on the PATH; installing go${gover} into /usr/local/go from $url"
	command -v curl >/dev/null || apt-get install -y -qq --no-install-recommends curl ca-certificates >/dev/null
	tmp=$(mktemp -d)
	curl -fsSL -o "$tmp/go.zip" "$url"
	python3 -c 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$tmp/go.zip" "$tmp"
	rm -rf /usr/local/go && mv "$tmp/golang.org/toolchain@v0.0.1-go${gover}.linux-amd64" /usr/local/go
	chmod +x /usr/local/go/bin/* /usr/local/go/pkg/tool/*/* 2>/dev/null || true
	rm -rf "$tmp"
fi
command -v go >/dev/null || echo "install-deps: Go is in /usr/local/go/bin (the Makefile finds it there; add it to your PATH for go commands)"

# X-IO (the shared-memory SBI) needs 2 MiB hugepages and hugetlbfs on
# /dev/hugepages. Reserve them when root; otherwise `l25gc up` falls back to
# SBI over tcp and says so.
# (Each running core or X-IO test takes 80 pages; more are reserved on demand.)
hugepages_total=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
if [ "${hugepages_total:-0}" -lt 512 ] || ! grep -qs " /dev/hugepages hugetlbfs " /proc/mounts; then
	if [ "$(id -u)" = 0 ]; then
		"$(dirname "$0")/../deploy/hugepages.sh" >/dev/null ||
			echo "install-deps: hugepages could not be reserved; the SBI will run over tcp" >&2
	else
		echo "install-deps: X-IO needs hugepages; as root run deploy/hugepages.sh (until then the SBI runs over tcp)" >&2
	fi
fi
