#!/usr/bin/env bash
# Prepares the kernel the VM tests (test/vm) boot: Debian's cloud kernel,
# whose SCTP is a module, unpacked without installing it, plus sctp.ko and
# the modules it depends on in load order, and virtio-net (the VM's NIC for
# tests that reach the host over a TAP device). Cached; prints the cache
# directory. Needs apt (Debian's package lists) and network on first use.
#
#   $cache/vmlinuz          the kernel
#   $cache/modules/*.ko     sctp and its dependencies
#   $cache/modules/order    their file names, dependencies first
set -euo pipefail

cache=${L25GC_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/l25gc/vm}
if [ -f "$cache/ready" ] && grep -q '^virtio_net' "$cache/modules/order" 2>/dev/null; then
	echo "$cache"
	exit 0
fi

meta=linux-image-cloud-amd64
pkg() { apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[^ ]*\)$/\1/p' | head -1; }
image=$(pkg)
if [ -z "$image" ]; then
	apt-get update -qq >&2 || true
	image=$(pkg)
fi
[ -n "$image" ] || { echo "vm-kernel: apt knows no $meta (Debian's package lists?)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 777 "$tmp" # apt-get download runs as _apt where it can
(cd "$tmp" && apt-get download -qq "$image" >&2)
dpkg-deb -x "$tmp"/*.deb "$tmp/x"
kver=$(ls "$tmp/x/lib/modules")
tree="$tmp/x/lib/modules/$kver/kernel"

mkdir -p "$tmp/out/modules"
cp "$tmp"/x/boot/vmlinuz-* "$tmp/out/vmlinuz"

# The depends= field of a module's .modinfo names the modules it needs
# (no modules.dep: depmod runs at install time, which we skip).
declare -A loaded=()
order=()
add() {
	local name=$1 file dep
	[ -n "${loaded[$name]:-}" ] && return
	file=$(find "$tree" -name "$name.ko" -o -name "${name//_/-}.ko" | head -1)
	[ -n "$file" ] || { echo "vm-kernel: module $name not in $image" >&2; exit 1; }
	loaded[$name]=1
	for dep in $(tr '\0' '\n' <"$file" | sed -n 's/^depends=//p' | tr ',' ' '); do
		add "$dep"
	done
	cp "$file" "$tmp/out/modules/"
	order+=("$(basename "$file")")
}
add sctp
add virtio_pci
add virtio_net
printf '%s\n' "${order[@]}" >"$tmp/out/modules/order"
echo "$image $kver" >"$tmp/out/ready"

mkdir -p "$(dirname "$cache")"
rm -rf "$cache"
mv "$tmp/out" "$cache"
echo "$cache"
