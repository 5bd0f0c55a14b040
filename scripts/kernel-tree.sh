#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepares the kernel source tree $PERF_AUX_CACHE/trees/NAME:
#
#   reference  Debian linux-source-6.12 + hook-ups + scripts/patches/reference
#   stock      Debian linux-source-6.12 + hook-ups (the negative control)
#   custom     the tree in $KERNEL_SRC (copied, never modified) + hook-ups
#   mutant     the reference tree + the patch given as second argument
#
# "Hook-ups" are the project's files overlaid at their kernel paths
# ($OVERLAY below) plus the patches
# in scripts/patches/hookup that wire them into Kconfig and the Makefiles.
#
# A tree is rebuilt only when its recipe (source version, overlay files,
# patches) changed, and then only changed files get a new mtime, so the
# build directories inside it (.build-*) rebuild incrementally.
#
# Usage: scripts/kernel-tree.sh NAME [MUTANT.patch]

set -euo pipefail
. "$(dirname "$0")/lib.sh"

OVERLAY="lib/tests lib/test_aux_pmu.c mm/tests tools/testing/selftests/perf_aux"

# Extracts Debian's linux-source-6.12 once and prints its path.
debian_source()
{
	local deb upstream dir tmp

	deb=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
		die "linux-source-6.12 is not installed (run scripts/deps.sh)"
	upstream=${deb%%-*}
	if dpkg --compare-versions "$upstream" lt "$PERF_AUX_MIN_DEBIAN"; then
		die "linux-source-6.12 $deb is older than $PERF_AUX_MIN_DEBIAN, which brought PERF_PMU_CAP_AUX_PREFER_LARGE; update it"
	fi
	dir="$PERF_AUX_CACHE/src/linux-$upstream"
	if [ ! -f "$dir/Makefile" ]; then
		tmp="$PERF_AUX_CACHE/src/.extract.$$"
		rm -rf "$tmp" && mkdir -p "$tmp"
		tar -C "$tmp" -xf /usr/src/linux-source-6.12.tar.xz
		rm -rf "$dir"
		mv "$tmp"/linux-source-6.12 "$dir"
		rm -rf "$tmp"
	fi
	echo "$dir"
}

tree_version()
{
	make -s -C "$1" kernelversion 2>/dev/null
}

patch_list()
{
	local name=$1 mutant=$2

	ls "$PERF_AUX_ROOT"/scripts/patches/hookup/*.patch
	case "$name" in
	reference | mutant)
		ls "$PERF_AUX_ROOT"/scripts/patches/reference/*.patch 2>/dev/null || true
		;;
	esac
	[ -n "$mutant" ] && echo "$mutant"
	return 0
}

overlay_files()
{
	# shellcheck disable=SC2086
	(cd "$PERF_AUX_ROOT" && find $OVERLAY -type f 2>/dev/null | sort)
}

# A hash of everything the tree is made of.
recipe()
{
	local src=$1 name=$2 mutant=$3 f

	{
		echo "$src $(tree_version "$src")"
		for f in $(patch_list "$name" "$mutant") ; do
			echo "$f"
			cat "$f"
		done
		for f in $(overlay_files); do
			echo "$f"
			cat "$PERF_AUX_ROOT/$f"
		done
	} | sha256sum | cut -d' ' -f1
}

main()
{
	local name=${1:?usage: kernel-tree.sh NAME [MUTANT.patch]}
	local mutant=${2:-} src tree stamp p

	case "$name" in
	reference | stock | mutant) src=$(debian_source) ;;
	custom) src=${KERNEL_SRC:?custom needs KERNEL_SRC}
		[ -f "$src/Makefile" ] || die "KERNEL_SRC=$src is not a kernel tree" ;;
	*) die "unknown tree '$name'" ;;
	esac
	if [ -n "$mutant" ]; then
		[ -f "$mutant" ] || die "no mutant patch $mutant"
		mutant=$(realpath "$mutant")
	fi
	tree="$PERF_AUX_CACHE/trees/$name"
	stamp=$(recipe "$src" "$name" "$mutant")
	echo "kernel source: $src, version $(tree_version "$src")"
	if [ -f "$tree/.perf_aux-recipe" ] &&
	   [ "$(cat "$tree/.perf_aux-recipe")" = "$stamp" ]; then
		echo "tree $tree is up to date"
		return
	fi

	mkdir -p "$PERF_AUX_CACHE/trees"
	if [ ! -d "$tree" ]; then
		cp -a "$src" "$tree.tmp" && mv "$tree.tmp" "$tree"
		rm -rf "$tree/.git"
	else
		# Content compare, no times: only files that differ get a
		# new mtime, so make rebuilds exactly what changed.
		rsync -rlc --delete --exclude='/.build-*' --exclude=/.git \
			--exclude=/.perf_aux-recipe "$src/" "$tree/"
	fi
	for d in $OVERLAY; do
		if [ -d "$PERF_AUX_ROOT/$d" ]; then
			mkdir -p "$tree/$d"
			rsync -rlc "$PERF_AUX_ROOT/$d/" "$tree/$d/"
		elif [ -f "$PERF_AUX_ROOT/$d" ]; then
			rsync -lc "$PERF_AUX_ROOT/$d" "$tree/$d"
		fi
	done
	for p in $(patch_list "$name" "$mutant"); do
		echo "applying $(basename "$p")"
		patch -p1 -s -N --no-backup-if-mismatch -d "$tree" < "$p" ||
			die "$(basename "$p") does not apply to $src"
	done
	echo "$stamp" > "$tree/.perf_aux-recipe"
}

main "$@"
