#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs the Debian packages the pipeline needs for the given targets, and
# fetches the target's static busybox (for the kselftest initramfs) into the
# cache.  Only what is missing is installed, so a second run costs a second.
#
# Usage: scripts/deps.sh TARGET|lava...
#
# "lava" is the set scripts/lava/check.sh needs: the dispatcher (lava-run)
# and schemas, busybox for the converter's host tests, and, unpacked in the
# cache, the device-type templates of lava-server (not installed: it would
# bring a Django server) and a Debian kernel for libguestfs (a container has
# none in /boot).

set -euo pipefail
. "$(dirname "$0")/lib.sh"

COMMON="linux-source-6.12 bc bison flex libelf-dev libssl-dev ccache cpio
	gcc make xz-utils rsync kmod python3 gzip libopencsd-bin"
ARM64="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm"
X86="qemu-system-x86 busybox-static libc6-dev"
# lava-run --validate of the board jobs looks for a TFTP directory and
# telnet (the stand-in devices' consoles), hence tftpd-hpa and telnet.
LAVA="lava-dispatcher lava-common python3-voluptuous python3-jinja2
	python3-yaml git qemu-system-arm busybox-static cpio tftpd-hpa telnet"
LAVA_CACHE=$PERF_AUX_CACHE/lava

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

# deb_unpack PACKAGE DIR: the package's files in DIR; its .deb stays in the
# cache, so a second run fetches nothing.
deb_unpack()
{
	local pkg=$1 dir=$2 deb

	[ -d "$dir" ] && return
	mkdir -p "$LAVA_CACHE/debs"
	deb=$(ls "$LAVA_CACHE/debs/${pkg}"_*.deb 2>/dev/null | head -1) || true
	if [ -z "$deb" ]; then
		apt_update
		# _apt cannot write to the cache: the download runs as root.
		(cd "$LAVA_CACHE/debs" && apt-get download -qq "$pkg" 2>&1 |
			grep -v 'unsandboxed' || true)
		deb=$(ls "$LAVA_CACHE/debs/${pkg}"_*.deb | head -1)
	fi
	dpkg-deb -x "$deb" "$dir.tmp" && mv "$dir.tmp" "$dir"
}

fetch_lava_files()
{
	local kpkg kver

	deb_unpack lava-server "$LAVA_CACHE/lava-server"
	[ -d "$LAVA_CACHE/supermin" ] && return
	apt_update
	kpkg=$(apt-cache depends linux-image-amd64 |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	deb_unpack "$kpkg" "$LAVA_CACHE/supermin.tmp"
	kver=${kpkg#linux-image-}
	depmod -b "$LAVA_CACHE/supermin.tmp" "$kver"
	mv "$LAVA_CACHE/supermin.tmp" "$LAVA_CACHE/supermin"
}

main()
{
	local pkgs=$COMMON target

	for target in "$@"; do
		case "$target" in
		lava) pkgs="$pkgs $LAVA"; continue ;;
		esac
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
		lava) fetch_lava_files ;;
		esac
	done
}

main "$@"
