#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make series: the suite as the patch series it would be posted as, against
# the pristine source of BASE (default: mainline), with a cover letter.  One
# commit per line of scripts/series/parts: the base's hook-up patch of that
# part and the suite's files it adds, with the commit message written there.
# The patches go to out/series/<base>/.
#
# Usage: scripts/series.sh [--check [--kernel-prefixes]]
#
# --check proves what a maintainer would try first, one "ok -"/"not ok -"
# line each: the series has at least SERIES_MIN_PATCHES patches, none adding
# more than SERIES_MAX_ADDED lines; every patch is checkpatch.pl --strict
# clean with the base's own checkpatch; the series git-am's onto the base
# and ends with the project's kselftest files, all of them; applied patch
# by patch to a copy of the whole pristine tree, the kselftests build at
# every patch that changes them (the prefix's own Makefile: a kernel build
# per prefix would cost a cold build each); and that tree holds the same
# files as the staged stock tree, so the stock run's KUnit results are the
# series' own (the KUnit run reuses that build).
#
# --kernel-prefixes (make check-full) also builds the arm64 kernel at every
# patch that changes it, with every test option of the series the tree has
# so far, in one build directory from prefix to prefix.
#
# A part's hook-up is "-" where it has none.  The kselftests come in parts
# (the helpers, then a program or two each): the perf_aux Makefile of each
# commit is the project's without the lines that name a program, source or
# header not yet added, so each patch adds its own lines.
#
# PERF_AUX_AUTHOR: "Name <mail>" of the commits, else git's user.name and
# user.email, else a placeholder.  Dates come from the project's HEAD, so
# the same commit gives the same series.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

SERIES_DIR=$PERF_AUX_ROOT/scripts/series
KSFT=tools/testing/selftests/perf_aux
SERIES_MIN_PATCHES=9
SERIES_MAX_ADDED=1000
CHECK=
[ "${1:-}" != --check ] || CHECK=1
KERNEL_PREFIXES=
[ "${2:-}" != --kernel-prefixes ] || KERNEL_PREFIXES=1

BASE=${BASE:-$(default_base)}
check_base "$BASE"
SRC=$PERF_AUX_CACHE/src/$BASE
WORK=$PERF_AUX_CACHE/series/$BASE
OUT=$PERF_AUX_OUT/series/$BASE
HOOKUP=$(base_patches "$BASE")/hookup

# The parts: "message hookup-number path...", comments dropped.
parts()
{
	grep -v '^#' "$SERIES_DIR/parts" | grep .
}

# part_patch HOOK: the patch of a part, a hook-up by number (0001) or a
# patch of the base's by its path (reference/0004: a fix the series
# carries first, on its own).
part_patch()
{
	case $1 in
	*/*) ls "$(base_patches "$BASE")/$1"-*.patch 2>/dev/null ;;
	*) ls "$HOOKUP/$1"-*.patch 2>/dev/null ;;
	esac
}

# The parts' patches that are not hook-ups: the fixes.
fix_patches()
{
	local msg hook paths

	while read -r msg hook paths; do
		case $hook in */*) part_patch "$hook" ;; esac
	done < <(parts)
}

# The files of the project under PATH... as git knows them (untracked ones
# too, ignored ones not): build output never reaches the series.
part_files()
{
	(cd "$PERF_AUX_ROOT" &&
		git ls-files --cached --others --exclude-standard -- "$@" | sort)
}

git_in()
{
	git -C "$1" -c core.autocrlf=false -c commit.gpgsign=false "${@:2}"
}

author()
{
	local name email

	if [ -n "${PERF_AUX_AUTHOR:-}" ]; then
		echo "$PERF_AUX_AUTHOR"
		return
	fi
	name=$(git -C "$PERF_AUX_ROOT" config user.name || true)
	email=$(git -C "$PERF_AUX_ROOT" config user.email || true)
	if [ -n "$name" ] && [ -n "$email" ]; then
		echo "$name <$email>"
	else
		echo "perf_aux suite <perf_aux@localhost>"
	fi
}

# maintainers_add REPO PATH...: the F: lines scripts/series/maintainers
# gives for PATH... (a file, or a directory with its trailing slash), each
# in its section among the F: lines in byte order.
maintainers_add()
{
	local repo=$1 path pattern section line

	shift
	for path in "$@"; do
		while IFS=$'\t' read -r pattern section; do
			line=$pattern
			# A directory added a part at a time (the kselftests):
			# each file's own line, a .c and its .h as one, so that
			# every patch says who maintains what it adds.
			case "$pattern" in
			*/)
				if [ "${path#"$pattern"}" != "$path" ] &&
				   [ "$pattern" != "$path/" ]; then
					line=$path
					[ ! -f "$PERF_AUX_ROOT/${path%.[ch]}.c" ] ||
						[ ! -f "$PERF_AUX_ROOT/${path%.[ch]}.h" ] ||
						line=${path%.[ch]}.[ch]
				fi ;;
			esac
			[ "$pattern" = "$path" ] || [ "$pattern" = "$path/" ] ||
				[ "$line" != "$pattern" ] || continue
			! grep -qxF "F:	$line" "$repo/MAINTAINERS" || continue
			LC_ALL=C awk -v sec="$section" -v f="F:	$line" '
				$0 == sec { in_sec = 1 }
				in_sec && !done && /^F:/ && $0 > f { print f; done = 1 }
				in_sec && !done && /^$/ { print f; done = 1 }
				/^$/ { in_sec = 0 }
				{ print }' "$repo/MAINTAINERS" > "$repo/MAINTAINERS.new"
			mv "$repo/MAINTAINERS.new" "$repo/MAINTAINERS"
		done < <(grep -v '^#' "$SERIES_DIR/maintainers")
	done
}

# A git repository of the pristine files the series changes (MAINTAINERS,
# what the hook-ups change), committed as the base.
series_base()
{
	# shellcheck disable=SC2046
	base_repo "$SRC" "$1" "Linux $VERSION (Debian linux-source-$BASE $DEBIAN)" \
		MAINTAINERS $(patched_files "$HOOKUP"/*.patch $(fix_patches))
}

# ksft_makefile REPO: the kselftests' Makefile of REPO as the files there
# so far have it: the project's, less each line (not a comment) naming a
# program (*_test), source or header that REPO does not hold yet.
ksft_makefile()
{
	local dir=$1/$KSFT line tok keep

	[ -d "$dir" ] || return 0
	while IFS= read -r line; do
		keep=1
		case "$line" in
		"#"*) ;;
		*)
			for tok in $(grep -oE '[A-Za-z0-9_]+(_test|\.[ch])\b' <<< "$line" || true); do
				case "$tok" in *_test) tok=$tok.c ;; esac
				[ -e "$dir/$tok" ] || keep=
			done ;;
		esac
		[ -z "$keep" ] || printf '%s\n' "$line"
	done < "$PERF_AUX_ROOT/$KSFT/Makefile" |
		# no blank line left at the end
		awk '/^$/ { blank++; next } { while (blank) { print ""; blank-- } print }' \
		> "$dir/Makefile"
}

make_series()
{
	local repo=$WORK/repo msg hook paths patch who date n=0

	who=$(author)
	date=$(git -C "$PERF_AUX_ROOT" log -1 --format=%cD 2>/dev/null || date -R)
	export GIT_AUTHOR_NAME=${who% <*} GIT_AUTHOR_EMAIL=${who##*<}
	GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>}
	export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
	export GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date

	series_base "$repo"
	while read -r msg hook paths; do
		n=$((n + 1))
		if [ "$hook" != - ]; then
			patch=$(part_patch "$hook") ||
				die "series part $n: no patch $hook in $HOOKUP"
			git_in "$repo" apply --index "$patch" ||
				die "series part $n: hook-up $(basename "$patch") does not apply to $BASE"
		fi
		if [ -n "$paths" ]; then
			# shellcheck disable=SC2086
			for f in $(part_files $paths); do
				mkdir -p "$repo/$(dirname "$f")"
				cp "$PERF_AUX_ROOT/$f" "$repo/$f"
			done
			# shellcheck disable=SC2086
			maintainers_add "$repo" $paths
			ksft_makefile "$repo"
		fi
		git_in "$repo" add -A
		{
			cat "$SERIES_DIR/$msg"
			# A message ending in a trailer (Fixes:) gets the
			# sign-off in the same block.
			tail -1 "$SERIES_DIR/$msg" | grep -q '^[A-Za-z-]*: ' || echo
			echo "Signed-off-by: $who"
		} | git_in "$repo" commit -q -F -
	done < <(parts)

	# The cover letter from the branch description: its first paragraph
	# is the subject, the rest the body, with the base named.
	{
		cat "$SERIES_DIR/cover.txt"
		echo
		echo "Base: Linux $VERSION, Debian linux-source-$BASE $DEBIAN."
		echo "Made by perf_aux \`make series\` from $(git -C "$PERF_AUX_ROOT" describe --always --dirty 2>/dev/null || echo '?')."
	} > "$WORK/description"
	git_in "$repo" config branch.perf_aux.description "$(cat "$WORK/description")"
	rm -rf "$OUT"
	mkdir -p "$OUT"
	git_in "$repo" format-patch -q --cover-letter --cover-from-description=subject \
		--no-signature -o "$OUT" base..perf_aux
	echo "series: $(ls "$OUT"/*.patch | wc -l) files in ${OUT#"$PERF_AUX_ROOT"/} (Linux $VERSION)"
	(cd "$OUT" && for patch in 0*.patch; do
		printf '  %-58s %s\n' "$patch" \
			"$(grep -m1 -o '[0-9]* insertions\?(+)' "$patch" || echo -)"
	done)
}

result()
{
	if [ "$1" -eq 0 ]; then
		echo "ok - series: $2"
	else
		echo "not ok - series: $2"
	fi
}

# Every patch (not the cover letter) checkpatch --strict clean with the
# base's checkpatch, run from inside the base as it must be.
check_checkpatch()
{
	local patch totals rc ignore=

	# Without git history (a Debian source) checkpatch cannot look up
	# the commit a Fixes: tag names; make fixes says so.
	[ -d "$SRC/.git" ] || ignore=--ignore=UNKNOWN_COMMIT_ID
	for patch in "${PATCHES[@]}"; do
		totals=$(cd "$SRC" && perl scripts/checkpatch.pl --strict $ignore "$patch" 2>&1 |
			sed -n 's/^total: //p' || true)
		case "$totals" in
		"0 errors, 0 warnings, 0 checks, "*) rc=0 ;;
		*)
			rc=1
			(cd "$SRC" && perl scripts/checkpatch.pl --strict $ignore --terse "$patch" |
				head -10 || true) ;;
		esac
		result $rc "checkpatch --strict $(basename "$patch"): ${totals:-no output}"
	done
}

# The series' shape: enough patches, none too large to review.
check_size()
{
	local patch added rc=0 most=0

	[ "${#PATCHES[@]}" -ge "$SERIES_MIN_PATCHES" ] || rc=1
	result $rc "${#PATCHES[@]} patches, at least $SERIES_MIN_PATCHES"
	for patch in "${PATCHES[@]}"; do
		added=$(patch_added "$patch")
		[ "$added" -le "$SERIES_MAX_ADDED" ] && continue
		# The kselftests are split to fit; a KUnit suite is one file
		# and one patch, which this check reports but does not hold.
		if grep -q "^diff --git a/$KSFT/" "$patch"; then
			result 1 "$(basename "$patch"): $added added lines, more than $SERIES_MAX_ADDED"
		else
			echo "ok - series: $(basename "$patch"): $added added lines, more than $SERIES_MAX_ADDED # SKIP not a kselftest part: one suite, one file"
		fi
	done
	for patch in $(grep -l "^diff --git a/$KSFT/" "${PATCHES[@]}"); do
		added=$(patch_added "$patch")
		[ "$added" -le "$most" ] || most=$added
	done
	rc=0
	[ "$most" -le "$SERIES_MAX_ADDED" ] || rc=1
	result $rc "no kselftest patch adds more than $SERIES_MAX_ADDED lines (at most $most)"
}

# The lines PATCH adds (its diff's "+" lines, not the "+++" headers).
patch_added()
{
	awk '/^diff --git / { diff = 1 } diff && /^\+/ && !/^\+\+\+ / { n++ }
		END { print n + 0 }' "$1"
}

# git am of the mails onto a fresh base repository: the series is what
# a maintainer's tools take.
check_am()
{
	local repo=$WORK/am rc=0 n

	series_base "$repo" > /dev/null
	git_in "$repo" am -q "${PATCHES[@]}" > "$WORK/am.log" 2>&1 || rc=$?
	n=$(git_in "$repo" rev-list --count base..HEAD 2>/dev/null || echo 0)
	[ "$rc" -eq 0 ] || head -20 "$WORK/am.log" || true
	result $rc "git am onto Linux $VERSION: $n commits"
	[ "$rc" -eq 0 ] || return 0

	# Its last commit holds the project's kselftest files, all of them,
	# the Makefile written for each prefix included.
	rc=0
	for f in $(part_files "$KSFT"); do
		cmp -s "$repo/$f" "$PERF_AUX_ROOT/$f" || { rc=1; echo "# not as in the project: $f"; }
	done
	for f in $(cd "$repo" && git ls-files "$KSFT"); do
		[ -e "$PERF_AUX_ROOT/$f" ] || { rc=1; echo "# not in the project: $f"; }
	done
	result $rc "the last commit has the project's $(part_files "$KSFT" | wc -l) files of $KSFT"
}

# headers_install TREE BUILD: the uapi headers the kselftests build with.
headers_install()
{
	make -s -C "$1" O="$2" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		headers_install > "$WORK/headers.log" 2>&1 && return 0
	head -20 "$WORK/headers.log" || true
	return 1
}

# check_prefixes TREE BUILD: the patches applied to TREE one by one, and
# after each that changes the kselftests, those of that prefix built (with
# that prefix's Makefile, into BUILD, afresh at the first: a program is
# compiled in the prefix that adds it, so its warnings show there).
# The series' test options (not VMAP_GRANULE_KUNIT_TEST_STRICT: the plain
# base does not carry large vmap).
SERIES_OPTIONS="PERF_AUX_ALLOC_KUNIT_TEST VMAP_GRANULE_KUNIT_TEST TEST_VMALLOC
	TEST_AUX_PMU"

# kernel_prefix TREE N PATCH: the arm64 kernel of the first N patches
# (kunit.py's arm64 configuration) with each of SERIES_OPTIONS that a
# Kconfig file of TREE declares by then; where that is a KUnit suite,
# kunit.py runs it too (test_vmalloc runs nothing: its own parameters).
# DEBUG_FS: the synthetic PMUs report there (kunit.py's arm64
# configuration leaves it out), as the kselftests' config asks.
kernel_prefix()
{
	local tree=$1 n=$2 frag=$WORK/prefix-$2.kunitconfig opt rc=0 t0=$SECONDS
	local -a how=(build)

	printf 'CONFIG_KUNIT=y\nCONFIG_PERF_EVENTS=y\nCONFIG_DEBUG_FS=y\n' > "$frag"
	for opt in $SERIES_OPTIONS; do
		! grep -rqx --include='Kconfig*' "config $opt" "$tree" ||
			echo "CONFIG_$opt=y" >> "$frag"
	done
	grep -q 'KUNIT_TEST=y' "$frag" &&
		how=(run --kernel_args=panic=-1
		     "--kernel_args=$(vmalloc_args - off)"
		     "--qemu_args=-m $GUEST_MEMORY_MIB -cpu $ARM64_QEMU_CPU")
	(cd "$tree" && CROSS=aarch64-linux-gnu- kunit_py "$WORK/kbuild" \
		"$WORK/kernel-$n.log" "${how[@]}" --arch=arm64 \
		--cross_compile=aarch64-linux-gnu- --kunitconfig="$frag") || rc=$?
	[ "$rc" -eq 0 ] || tail -20 "$WORK/kernel-$n.log"
	result $rc "$(basename "$3"): with the $n patches so far, the arm64 kernel builds with $(grep -c 'TEST' "$frag") test options$([ "${how[0]}" = build ] || echo ", its KUnit suites pass: $(grep -o 'Ran [0-9]* tests.*' "$WORK/kernel-$n.log" | tail -1)") ($((SECONDS - t0)) s)"
}

check_prefixes()
{
	local tree=$1 build=$2 patch rc=0 n=0 built=0 progs

	for patch in "${PATCHES[@]}"; do
		n=$((n + 1))
		(cd "$tree" && git apply "$patch") > "$WORK/apply.log" 2>&1 || rc=$?
		if [ "$rc" -ne 0 ]; then
			head -20 "$WORK/apply.log" || true
			result 1 "$(basename "$patch") applies to the pristine Linux $VERSION tree after the $((n - 1)) before it"
			return 0
		fi
		# A patch to a uapi header: installed again for what follows.
		if grep -q '^diff --git a/\(arch/[^/]*/\)\?include/uapi/' "$patch" &&
		   ! headers_install "$tree" "$build"; then
			result 1 "$(basename "$patch"): make headers_install"
			return 0
		fi
		if [ -n "$KERNEL_PREFIXES" ] && grep '^diff --git a/' "$patch" |
		   grep -qv '^diff --git a/\(tools/\|MAINTAINERS \)'; then
			kernel_prefix "$tree" "$n" "$patch"
		fi
		grep -q "^diff --git a/$KSFT/" "$patch" || continue
		built=$((built + 1))
		make -s -j2 -C "$tree/tools/testing/selftests" O="$build" ARCH=arm64 \
			CROSS_COMPILE=aarch64-linux-gnu- TARGETS=perf_aux \
			> "$WORK/kselftest-$n.log" 2>&1 || rc=$?
		grep -i 'warning:\|error:' "$WORK/kselftest-$n.log" | head -10 || true
		! grep -qi 'warning:\|error:' "$WORK/kselftest-$n.log" || rc=1
		progs=$(cd "$build/kselftest/perf_aux" 2>/dev/null && ls | grep '_test$' | xargs || true)
		result $rc "$(basename "$patch"): with the $n patches so far, TARGETS=perf_aux builds, no warning: ${progs:-no program yet}"
		rc=0
	done
	rc=0
	[ "$built" -gt 1 ] || rc=1
	result $rc "all $n patches apply to the whole pristine Linux $VERSION tree; the kselftests built at each of the $built that change them"
}

# unfixed_is TREE FILE STOCK: TREE's FILE with the series' fixes taken
# back out is STOCK.
unfixed_is()
{
	local tmp=$WORK/unfixed p rc=0

	rm -rf "$tmp"
	mkdir -p "$tmp/$(dirname "$2")"
	cp "$1/$2" "$tmp/$2"
	for p in $(fix_patches); do
		patched_files "$p" | grep -qxF "$2" || continue
		patch -s -R -p1 -d "$tmp" -i "$p" > /dev/null 2>&1 || rc=1
	done
	[ "$rc" -eq 0 ] && cmp -s "$tmp/$2" "$3" || rc=1
	rm -rf "$tmp"
	return "$rc"
}

# The series applied to a copy of the whole pristine tree (hard links:
# git apply replaces, never rewrites, the files it changes), and the
# kselftests built there as in any kernel tree, at each prefix
# (check_prefixes).  The headers installed by an earlier check stay: the
# copy keeps the pristine files' mtimes, so make installs again only a
# header the series changes.
check_tree()
{
	local tree=$WORK/tree build=$WORK/build rc=0 f same=0 differ=0 fixed='' stock

	rm -rf "$tree" "$build/kselftest"
	cp -al "$SRC" "$tree"
	rm -f "$tree/.perf_aux-debian"
	headers_install "$tree" "$build" || rc=$?
	result $rc "make headers_install in the pristine Linux $VERSION tree"
	[ "$rc" -eq 0 ] || return 0

	check_prefixes "$tree" "$build"

	# The kernel files the series touches (not MAINTAINERS, not tools/:
	# no part of a kernel build), against the staged stock tree.
	stock=$PERF_AUX_CACHE/trees/$BASE-stock
	if [ ! -d "$stock" ]; then
		echo "ok - series: same files as the stock tree # SKIP no stock tree of $BASE staged"
		return 0
	fi
	for f in $(cd "$WORK/am" && git diff --name-only base HEAD |
			grep -v '^MAINTAINERS$\|^tools/'); do
		if cmp -s "$tree/$f" "$stock/$f"; then
			same=$((same + 1))
		elif unfixed_is "$tree" "$f" "$stock/$f"; then
			fixed=$((fixed + 1))
			echo "# differs from the stock tree by the series' fixes only: $f"
		else
			differ=$((differ + 1))
			echo "# differs from the stock tree: $f"
		fi
	done
	rc=0
	[ "$differ" -eq 0 ] || rc=1
	result $rc "the stock tree holds the series' $same kernel files${fixed:+ and, but for the fixes, $fixed more}: its KUnit run is the series' own${fixed:+ without the fixes}"
}

[ -d "$SRC" ] || "$PERF_AUX_ROOT/scripts/deps.sh" "base-$BASE" > /dev/null
VERSION=$(tree_version "$SRC")
DEBIAN=$(cat "$SRC/.perf_aux-debian" 2>/dev/null || echo unknown)
mkdir -p "$WORK"
make_series
# The patches without the cover letter.
mapfile -t PATCHES < <(ls "$OUT"/0*.patch | grep -v '/0000-cover-letter.patch$')
if [ -n "$CHECK" ]; then
	check_size
	check_checkpatch
	check_am
	check_tree
fi
