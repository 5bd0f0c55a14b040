#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs the Debian packages the pipeline needs for the given targets, and
# fetches the target's static busybox (for the kselftest initramfs) into the
# cache.  Only what is missing is installed, so a second run costs a second.
#
# Usage: scripts/deps.sh TARGET|lava|lab|base-BASE|testdefs...
#
# "testdefs" unpacks a Debian (trixie) arm64 root filesystem for
# test-definitions' kselftest runner into $PERF_AUX_CACHE/rootfs (an arm64
# sources list, state and cache of its own; nothing installed).
#
# "base-BASE" unpacks Debian's linux-source-BASE into $PERF_AUX_CACHE/src/BASE
# (mainline bases from sid or experimental, through a sources list of its
# own: the machine's apt configuration is never changed).
#
# "lava" is the set scripts/lava/check.sh needs: the dispatcher (lava-run)
# and schemas, busybox for the converter's host tests, and, unpacked in the
# cache, the device-type templates of lava-server (not installed: it would
# bring a Django server) and a Debian kernel for libguestfs (a container has
# none in /boot).  "lab" is that and the local lab's server side
# (scripts/perf_aux_lava/lab.py): lava-server 2023.01 without its
# recommended apache2 (gunicorn serves the API), lavacli, PostgreSQL.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

# busybox-static and libopencsd-bin: the host tests of the LAVA converter
# (busybox sh and awk) and of the ETE decoder (trc_pkt_lister);
# python3-yaml: the host test of integrations/ parses what its patches add;
# python3-jinja2: the LAVA client's host tests render jobs with
# lava-jobs/generate.py (/usr/bin/python3), before any LAVA stage.
COMMON="bc bison flex libelf-dev libssl-dev ccache cpio
	gcc make xz-utils rsync kmod python3 gzip libopencsd-bin busybox-static
	python3-yaml python3-jinja2"
ARM64="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm"
X86="qemu-system-x86 busybox-static libc6-dev"
# lava-run --validate of the board jobs looks for a TFTP directory and
# telnet (the stand-in devices' consoles), hence tftpd-hpa and telnet.
LAVA="lava-dispatcher lava-common python3-voluptuous python3-jinja2
	python3-yaml git qemu-system-arm busybox-static cpio tftpd-hpa telnet"
LAB="lava-server lavacli postgresql"
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
# replace the host's own /bin/busybox.  It comes from the host's own
# release through a private arm64 apt (apt_arm64_suite): the machine's dpkg
# architectures stay as they are.
fetch_arm64_busybox()
{
	local dir="$PERF_AUX_CACHE/busybox/arm64" apt tmp codename

	[ -x "$dir/busybox" ] && return
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	apt=$(apt_arm64_suite "$codename")
	rm -f "$apt"/archives/*.deb
	apt_arm64 "$apt" install -y -qq -d --no-install-recommends busybox-static 		> /dev/null || die "busybox-static:arm64 could not be downloaded"
	tmp=$(mktemp -d)
	dpkg-deb -x "$apt"/archives/busybox-static_*_arm64.deb "$tmp"
	mkdir -p "$dir"
	cp "$tmp/bin/busybox" "$dir/busybox"
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

# apt-get with the private sources list of SUITE (sid, experimental).
apt_private()
{
	local suite=$1 dir="$PERF_AUX_CACHE/apt/$1"

	shift
	apt-get -q -o Dir::Etc::sourcelist="$dir/sources.list" \
		-o Dir::Etc::sourceparts=- -o Dir::State::Lists="$dir/lists" \
		-o APT::Architectures=amd64 "$@"
}

# The archive the machine's own apt sources use for Debian itself.
debian_archive()
{
	apt-get indextargets --format '$(URI)' 'Created-By: Packages' |
		sed -n 's#^\(.*/debian\)/dists/.*#\1#p' | head -1
}

# fetch_debian_deb BASE: the linux-source-BASE .deb in the cache; prints its
# path.
fetch_debian_deb()
{
	local base=$1 suite dir pkg="linux-source-$1" archive

	suite=$(base_suite "$base")
	mkdir -p "$PERF_AUX_CACHE/debs"
	if [ -z "$suite" ]; then
		install_packages "$pkg" >&2
		echo "/usr/src/$pkg.tar.xz"
		return
	fi
	dir="$PERF_AUX_CACHE/apt/$suite"
	mkdir -p "$dir/lists/partial"
	archive=$(debian_archive)
	[ -n "$archive" ] || die "no Debian archive in the machine's apt sources"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
		"$archive $suite main" > "$dir/sources.list"
	apt_private "$suite" update -qq >&2 ||
		die "apt-get update of $suite failed"
	(cd "$PERF_AUX_CACHE/debs" &&
		apt_private "$suite" download -qq "$pkg" 2>&1 |
		grep -v unsandboxed >&2) || true
	ls -t "$PERF_AUX_CACHE/debs/${pkg}"_*.deb 2>/dev/null | head -1 | grep . ||
		die "$pkg could not be downloaded from $suite"
}

# fetch_base BASE: $PERF_AUX_CACHE/src/BASE holds the base's kernel source
# and, in .perf_aux-debian, the Debian version it came from.
fetch_base()
{
	local base=$1 dst="$PERF_AUX_CACHE/src/$1" file tmp version

	check_base "$base"
	[ -f "$dst/.perf_aux-debian" ] && return
	file=$(fetch_debian_deb "$base")
	tmp="$PERF_AUX_CACHE/src/.extract.$$"
	rm -rf "$tmp" && mkdir -p "$tmp"
	if [ "${file%.deb}" != "$file" ]; then
		version=$(dpkg-deb -f "$file" Version)
		dpkg-deb --fsys-tarfile "$file" |
			tar -C "$tmp" -xf - "./usr/src/linux-source-$base.tar.xz"
		file="$tmp/usr/src/linux-source-$base.tar.xz"
	else
		version=$(dpkg-query -W -f='${Version}' "linux-source-$base")
	fi
	if [ "$base" = 6.12 ] && dpkg --compare-versions "${version%%-*}" \
			lt "$PERF_AUX_MIN_DEBIAN"; then
		die "linux-source-6.12 $version is older than $PERF_AUX_MIN_DEBIAN, which brought PERF_PMU_CAP_AUX_PREFER_LARGE"
	fi
	echo "unpacking linux-source-$base $version"
	tar -C "$tmp" -xf "$file"
	rm -rf "$dst"
	mv "$tmp/linux-source-$base" "$dst"
	rm -rf "$tmp"
	echo "$version" > "$dst/.perf_aux-debian"
}

# apt_arm64 DIR ARGS...: apt-get with DIR's own sources list, lists, dpkg
# status (empty: nothing is installed) and archives, arm64 packages only;
# nothing of the machine's apt configuration or dpkg state is read or
# changed.
apt_arm64()
{
	local dir=$1

	shift
	apt-get -q -o Dir::Etc::sourcelist="$dir/sources.list" \
		-o Dir::Etc::sourceparts="$dir/empty" \
		-o Dir::Etc::preferences=/dev/null \
		-o Dir::Etc::preferencesparts="$dir/empty" \
		-o Dir::State::Lists="$dir/lists" \
		-o Dir::State::status="$dir/status" \
		-o Dir::Cache="$dir/cache" -o Dir::Cache::archives="$dir/archives" \
		-o APT::Architecture=arm64 -o APT::Architectures::=arm64 \
		-o APT::Sandbox::User=root "$@"
}

# apt_arm64_suite SUITE: the private arm64 apt directory of Debian SUITE,
# its lists updated once per run; prints its path.
apt_arm64_suite()
{
	local apt="$PERF_AUX_CACHE/apt/$1-arm64" archive

	mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/cache" "$apt/empty"
	[ -f "$apt/status" ] || : > "$apt/status"
	if [ ! -f "$apt/.updated.$$" ]; then
		archive=$(debian_archive)
		[ -n "$archive" ] || die "no Debian archive in the machine's apt sources"
		echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
			"$archive $1 main" > "$apt/sources.list"
		apt_arm64 "$apt" update -qq >&2 || die "apt-get update of $1 arm64 failed"
		rm -f "$apt"/.updated.* && : > "$apt/.updated.$$"
	fi
	echo "$apt"
}

# The packages of the Debian root filesystem that test-definitions'
# kselftest.sh runs on: the ones it installs itself (its install(): sed
# perl wget xz-utils iproute2 python3-tap, the last for its parser), and
# the shell, core utilities and tools a Debian root has.
TESTDEFS_PACKAGES="base-files dash coreutils grep findutils mawk mount
	util-linux kmod procps sed perl wget xz-utils iproute2 python3-tap"

# fetch_testdefs_rootfs: trixie's arm64 packages (the release of KernelCI's
# trixie-kselftest root filesystem) with everything they depend on,
# unpacked into $PERF_AUX_CACHE/rootfs/trixie-arm64 (dpkg-deb -x: no
# maintainer script runs, and none is needed to run kselftest.sh), the
# packages and versions in its .perf_aux-packages.
fetch_testdefs_rootfs()
{
	local dir="$PERF_AUX_CACHE/rootfs/trixie-arm64" apt deb

	[ -f "$dir/.perf_aux-packages" ] && return
	apt=$(apt_arm64_suite trixie)
	rm -f "$apt"/archives/*.deb
	# shellcheck disable=SC2086
	apt_arm64 "$apt" install -y -qq -d --no-install-recommends \
		$TESTDEFS_PACKAGES > /dev/null ||
		die "the trixie arm64 packages could not be downloaded"
	rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
	for deb in "$apt"/archives/*.deb; do
		dpkg-deb -x "$deb" "$dir.tmp"
		dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb"
	done > "$apt/packages.txt"
	rm -rf "$dir.tmp/usr/share/doc" "$dir.tmp/usr/share/man" \
		"$dir.tmp/usr/share/locale" "$dir.tmp/usr/share/info"
	mv "$apt/packages.txt" "$dir.tmp/.perf_aux-packages"
	rm -rf "$dir" && mv "$dir.tmp" "$dir"
	echo "trixie arm64 root filesystem: $(wc -l < "$dir/.perf_aux-packages") packages"
}

# The cross compiler's plugin headers (and g++ to build plugins with): the
# sanitize build erases kernel stacks with GCC's stackleak plugin.  The
# other configurations turn plugins off (scripts/config/boot.config).
install_gcc_plugin_headers()
{
	local major

	major=$(aarch64-linux-gnu-gcc -dumpversion | cut -d. -f1)
	install_packages g++ "gcc-$major-plugin-dev-aarch64-linux-gnu"
}

main()
{
	local pkgs=$COMMON target

	for target in "$@"; do
		case "$target" in
		lava) pkgs="$pkgs $LAVA"; continue ;;
		lab) pkgs="$pkgs $LAVA $LAB"; continue ;;
		base-* | testdefs) continue ;;
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
		arm64-*) install_gcc_plugin_headers; fetch_arm64_busybox ;;
		lava | lab) fetch_lava_files ;;
		base-*) fetch_base "${target#base-}" ;;
		testdefs) fetch_testdefs_rootfs ;;
		esac
	done
}

main "$@"
