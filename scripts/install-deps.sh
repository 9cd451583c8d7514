#!/usr/bin/env bash
# Installs what L25GC+ needs on Debian 12 when it is missing. Idempotent and
# quiet when everything is there; run as root (make run / make test call it).
set -euo pipefail

need_pkgs=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in pkg-config libdpdk-dev tshark iproute2 procps; do
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

if ! command -v go >/dev/null; then
	echo "install-deps: Go >= 1.24 is needed (go.dev/doc/install); Debian 12's golang-go is too old" >&2
	exit 1
fi
