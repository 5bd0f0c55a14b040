#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepares the kernel source tree $PERF_AUX_CACHE/trees/<base>-NAME:
#
#   reference  Debian linux-source-<base> + hook-ups + reference patches
#   stock      Debian linux-source-<base> + hook-ups (the negative control)
#   custom     the tree in $KERNEL_SRC (copied, never modified) + hook-ups
#   mutant     the reference tree + the patch given as second argument
#   series-vN  Debian linux-source-<base> + the series in $SERIES (an mbox or
#              a directory of patches, git am'd onto the base) + hook-ups
#
# BASE (default: the first of PERF_AUX_BASES) chooses the Debian source; for
# a custom tree the base is its version's major.minor.  "Hook-ups" are the
# project's files overlaid at their kernel paths ($OVERLAY below) plus the
# patches in scripts/patches/<base>/hookup that wire them into Kconfig and
# the Makefiles; scripts/patches/<base>/reference is what the base lacks of
# the rules under test.
#
# A tree is rebuilt only when its recipe (source version, overlay files,
# patches) changed, and then only changed files get a new mtime, so the
# build directories inside it (.build-*) rebuild incrementally.
#
# Usage: BASE=7.3 [SERIES=PATH] scripts/kernel-tree.sh NAME [MUTANT.patch]

set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OVERLAY="kernel/events/ring_buffer_kunit.c kernel/events/ring_buffer_kunit_orders.h
	kernel/events/ring_buffer_kunit.kunitconfig
	lib/test_aux_pmu.c mm/tests tools/testing/selftests/perf_aux"
staging=
series_count=0

# The base's Debian source, unpacked by scripts/deps.sh base-BASE.
debian_source()
{
	local dir="$PERF_AUX_CACHE/src/$1"

	[ -f "$dir/.perf_aux-debian" ] ||
		die "no source for base $1 (run scripts/deps.sh base-$1)"
	echo "$dir"
}

patch_list()
{
	local name=$1 mutant=$2 dir

	dir=$(base_patches "$base")
	# A series is written against the plain base: it goes first.
	case "$name" in series-*) series_diff ;; esac
	ls "$dir"/hookup/*.patch
	case "$name" in
	reference | mutant)
		ls "$dir"/reference/*.patch 2>/dev/null || true
		;;
	esac
	[ -n "$mutant" ] && echo "$mutant"
	return 0
}

# The series as one diff, made by series_am.
series_diff()
{
	echo "$PERF_AUX_CACHE/series-am/$base.diff"
}

# series_am SRC: git am of $SERIES onto the files of SRC it changes (a
# repository of those files alone: git am reads nothing else); the result
# as one diff for the staging.  A series that does not apply stops here,
# naming the patch, with git am's own message.
series_am()
{
	local src=$1 repo=$PERF_AUX_CACHE/series-am/$base f rc=0
	local -a mails

	mapfile -t mails < <(series_mails)
	[ "${#mails[@]}" -gt 0 ] && [ -s "${mails[0]}" ] ||
		die "SERIES=$SERIES holds no patch"
	# shellcheck disable=SC2046
	base_repo "$src" "$repo" base $(patched_files "${mails[@]}")
	git -C "$repo" -c user.name=perf_aux -c user.email=perf_aux@localhost \
		am --empty=drop "${mails[@]}" > "$repo.log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		cat "$repo.log" >&2
		die "SERIES=$SERIES does not apply to $base: $(sed -n 's/^Patch failed at //p' "$repo.log" | head -1)"
	fi
	series_count=$(git -C "$repo" rev-list --count base..HEAD)
	echo "series: $series_count patches applied with git am"
	git -C "$repo" diff base HEAD > "$(series_diff)"
}

overlay_files()
{
	# shellcheck disable=SC2086
	(cd "$PERF_AUX_ROOT" && find $OVERLAY -type f 2>/dev/null | sort)
}

# seed_tree NAME BASE: a tree of the same base to start a new one from, its
# build directories included, so that the new tree's first build recompiles
# only what differs (the stock control after the reference, a mutant).
seed_tree()
{
	local t

	[ "$1" != custom ] || return 0
	for t in reference stock mutant series-; do
		t="$PERF_AUX_CACHE/trees/$(tree_name "$t" "$2")"
		if [ -f "$t/.perf_aux-recipe" ]; then
			echo "$t"
			return
		fi
	done
}

# new_tree TREE SRC [SEED]: TREE as a copy of SEED or SRC.  Of SEED's
# build directories only TARGET's default one comes along: the others may
# be many and large, and the first build of another recompiles only what
# differs anyway (ccache).
new_tree()
{
	local build=.build-${TARGET:-arm64-4k}

	if [ -n "${3:-}" ]; then
		echo "starting $1 from $3 and its $build"
		rsync -a --exclude='/.build-*' "$3/" "$1.tmp/"
		[ ! -d "$3/$build" ] || cp -a "$3/$build" "$1.tmp/"
	else
		cp -a "$2" "$1.tmp"
	fi
	rm -rf "$1.tmp/.git" "$1.tmp/.perf_aux-recipe"
	mv "$1.tmp" "$1"
}

# staged_content SRC STAGE PATCH...: STAGE holds the overlay and every file
# a patch changes, patched; STAGE.files lists them for rsync (anchored).
staged_content()
{
	local src=$1 stage=$2 f d p

	shift 2
	for d in $OVERLAY; do
		if [ -d "$PERF_AUX_ROOT/$d" ]; then
			mkdir -p "$stage/$d"
			cp -a "$PERF_AUX_ROOT/$d/." "$stage/$d/"
		else
			mkdir -p "$stage/$(dirname "$d")"
			cp -a "$PERF_AUX_ROOT/$d" "$stage/$d"
		fi
	done
	for f in $(patched_files "$@"); do
		[ -e "$stage/$f" ] || [ ! -e "$src/$f" ] || {
			mkdir -p "$stage/$(dirname "$f")"
			cp -a "$src/$f" "$stage/$f"
		}
	done
	for p in "$@"; do
		echo "applying $(basename "$p")"
		patch -p1 -s -N --no-backup-if-mismatch -d "$stage" < "$p" ||
			die "$(basename "$p") does not apply to $src"
	done
	{
		(cd "$stage" && find . -type f -o -type l) | sed 's#^\.##'
		# The overlay's own directories, whatever the builds left there.
		for d in $OVERLAY; do
			[ -e "$src/$d" ] || echo "/$d"
		done
	} > "$stage.files"
}

# source_stamp SRC: what identifies an unpacked source.
source_stamp()
{
	echo "$1 $(cat "$1/.perf_aux-debian" 2>/dev/null) $(tree_version "$1")"
}

# restore_unstaged SRC TREE OLD NEW: the files listed in OLD (staged for the
# tree's previous recipe) and not in NEW go back to SRC's content, or away
# where SRC has none.
restore_unstaged()
{
	local src=$1 tree=$2 f

	comm -23 <(sort "$3") <(sort "$4") | while read -r f; do
		if [ -f "$src$f" ] || [ -L "$src$f" ]; then
			rsync -lc "$src$f" "$tree$f"
		elif [ -f "$tree$f" ]; then
			rm -f "$tree$f"
		fi
	done
}

# tree_state SRC: what a user's tree holds, for the recipe: a git tree's
# HEAD, its uncommitted diff and untracked files; any other tree's file
# names, sizes and modification times.
tree_state()
{
	if git -C "$1" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
		git -C "$1" rev-parse HEAD
		git -C "$1" diff HEAD
		git -C "$1" ls-files --others --exclude-standard -z |
			(cd "$1" && xargs -0r sha256sum)
	else
		(cd "$1" && find . -path ./.git -prune -o -type f \
			-printf '%P %s %T@\n' | LC_ALL=C sort)
	fi
}

# tree_describe SRC: the same in words, for the run's log and the report.
tree_describe()
{
	if git -C "$1" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
		echo "git $(git -C "$1" describe --always --dirty --abbrev=12)"
	else
		echo "not a git tree, files $(tree_state "$1" | sha256sum | cut -c1-12)"
	fi
}

# sync_tree NAME SRC TREE: TREE made SRC plus the staging copy ($staging,
# listed in $staging.files).  Content compare, no times: only files that
# differ get a new mtime, so make rebuilds exactly what changed.  The overlay
# and the patched files come from the staging copy, so that a file a patch
# changes is written once, and only when its patched content changed.
sync_tree()
{
	local name=$1 src=$2 tree=$3

	if [ "$name" != custom ] && [ -f "$tree/.perf_aux-staged" ] &&
	   [ "$(cat "$tree/.perf_aux-src" 2>/dev/null)" = "$(source_stamp "$src")" ]; then
		# A Debian source never changes: only what was staged before
		# (a previous mutant) and what is staged now can differ.
		restore_unstaged "$src" "$tree" "$tree/.perf_aux-staged" "$staging.files"
	else
		rsync -rlc --delete --exclude='/.build-*' --exclude=/.git \
			--exclude='/.perf_aux-*' --exclude-from="$staging.files" \
			"$src/" "$tree/"
	fi
	rsync -rlc "$staging/" "$tree/"
	cp "$staging.files" "$tree/.perf_aux-staged"
	source_stamp "$src" > "$tree/.perf_aux-src"
}

# A hash of everything the tree is made of.
recipe()
{
	local src=$1 name=$2 mutant=$3 f

	{
		echo "$src $(tree_version "$src")"
		[ "$name" != custom ] || tree_state "$src"
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
	local mutant=${2:-} src tree stamp p origin

	base=${BASE:-$(default_base)}
	case "$name" in
	reference | stock | mutant)
		check_base "$base"
		src=$(debian_source "$base")
		origin="Debian linux-source-$base $(cat "$src/.perf_aux-debian")" ;;
	series-*)
		check_base "$base"
		[ -n "${SERIES:-}" ] || die "$name needs SERIES"
		[ -e "$SERIES" ] || die "SERIES=$SERIES: no such file or directory"
		src=$(debian_source "$base")
		series_am "$src"
		origin="Debian linux-source-$base $(cat "$src/.perf_aux-debian") + series \"$(series_subject)\" ($series_count patches)" ;;
	custom) src=${KERNEL_SRC:?custom needs KERNEL_SRC}
		[ -f "$src/Makefile" ] || die "KERNEL_SRC=$src is not a kernel tree"
		base=$(version_base "$(tree_version "$src")")
		[ -d "$(base_patches "$base")" ] ||
			die "KERNEL_SRC=$src is $(tree_version "$src"): no hook-ups for $base (bases: $PERF_AUX_BASES)"
		origin="$src ($(tree_describe "$src"))" ;;
	*) die "unknown tree '$name'" ;;
	esac
	if [ -n "$mutant" ]; then
		[ -f "$mutant" ] || die "no mutant patch $mutant"
		mutant=$(realpath "$mutant")
	fi
	tree="$PERF_AUX_CACHE/trees/$(tree_name "$name" "$base")"
	stamp=$(recipe "$src" "$name" "$mutant")
	echo "kernel source: $origin, version $(tree_version "$src")"
	if [ -f "$tree/.perf_aux-recipe" ] &&
	   [ "$(cat "$tree/.perf_aux-recipe")" = "$stamp" ]; then
		echo "tree $tree is up to date"
		return
	fi

	mkdir -p "$PERF_AUX_CACHE/trees"
	[ -d "$tree" ] || new_tree "$tree" "$src" "$(seed_tree "$name" "$base")"
	staging=$(mktemp -d)
	trap 'rm -rf "$staging" "$staging.files"' EXIT
	# shellcheck disable=SC2046
	staged_content "$src" "$staging" $(patch_list "$name" "$mutant")
	sync_tree "$name" "$src" "$tree"
	echo "$origin, version $(tree_version "$src")" > "$tree/.perf_aux-source"
	echo "$stamp" > "$tree/.perf_aux-recipe"
}

# Sourced by the host tests for its functions; run, it prepares a tree.
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
