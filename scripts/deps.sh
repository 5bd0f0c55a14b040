#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs the Debian packages the pipeline needs for the given targets, and
# fetches the target's static busybox (for the kselftest initramfs) into the
# cache.  Only what is missing is installed, so a second run costs a second.
#
# Usage: scripts/deps.sh TARGET...

set -euo pipefail
. "$(dirname "$0")/lib.sh"

COMMON="linux-source-6.12 bc bison flex libelf-dev libssl-dev ccache cpio
	gcc make xz-utils rsync kmod python3 gzip"
ARM64="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm"
X86="qemu-system-x86 busybox-static libc6-dev"

missing()
{
	local pkg

	for pkg in "$@"; do
		dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$pkg"
	done
}

apt_updated=
apt_update()
{
	[ -n "$apt_updated" ] && return
	apt-get update -qq
	apt_updated=1
}

install_packages()
{
	local need

	need=$(missing "$@")
	[ -z "$need" ] && return
	echo "installing:" $need
	apt_update
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $need >/dev/null
}

# The arm64 busybox is unpacked into the cache, never installed: it would
# replace the host's own /bin/busybox.
fetch_arm64_busybox()
{
	local dir="$PERF_AUX_CACHE/busybox/arm64" tmp

	[ -x "$dir/busybox" ] && return
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
		apt_updated=
	fi
	apt_update
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download -qq busybox-static:arm64)
	dpkg-deb -x "$tmp"/busybox-static_*_arm64.deb "$tmp/root"
	mkdir -p "$dir"
	cp "$tmp/root/bin/busybox" "$dir/busybox"
	rm -rf "$tmp"
}

main()
{
	local pkgs=$COMMON target

	for target in "$@"; do
		check_target "$target"
		case "$target" in
		arm64-*) pkgs="$pkgs $ARM64" ;;
		*) pkgs="$pkgs $X86" ;;
		esac
	done
	# shellcheck disable=SC2086
	install_packages $pkgs
	for target in "$@"; do
		case "$target" in
		arm64-*) fetch_arm64_busybox ;;
		esac
	done
}

main "$@"
