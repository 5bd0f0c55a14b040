#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make fixes: the fixes the series carries first (the parts of
# scripts/series/parts whose patch is one of the base's by path), each as
# a patch of its own against the pristine source of BASE, for the
# maintainer of the code it fixes to take without the tests.  The patches
# go to out/fixes/<base>/, each checked as that maintainer would: "ok -"/
# "not ok -" lines for checkpatch.pl --strict (the base's own) and git am
# onto the pristine base.
#
# Usage: BASE=7.3 scripts/fixes.sh

set -euo pipefail
. "$(dirname "$0")/lib.sh"

BASE=${BASE:-$(default_base)}
check_base "$BASE"
SRC=$PERF_AUX_CACHE/src/$BASE
WORK=$PERF_AUX_CACHE/series/$BASE
OUT=$PERF_AUX_OUT/fixes/$BASE

result()
{
	if [ "$1" -eq 0 ]; then
		echo "ok - fixes: $2"
	else
		echo "not ok - fixes: $2"
	fi
}

# The series' repository holds the fixes as its first commits.
BASE="$BASE" "$PERF_AUX_ROOT/scripts/series.sh" > /dev/null
n=$(grep -v '^#' "$PERF_AUX_ROOT/scripts/series/parts" | awk '$2 ~ /\//' | wc -l)
[ "$n" -gt 0 ] || die "no fix in scripts/series/parts"
rm -rf "$OUT"
mkdir -p "$OUT"
for c in $(git -C "$WORK/repo" rev-list --reverse base..perf_aux | head -"$n"); do
	git -C "$WORK/repo" format-patch -q --no-signature -o "$OUT" \
		--start-number "$(($(ls "$OUT" | wc -l) + 1))" -1 "$c"
done
mapfile -t FIXES < <(ls "$OUT"/*.patch)
echo "fixes: ${#FIXES[@]} in ${OUT#"$PERF_AUX_ROOT"/} (Linux $(tree_version "$SRC"))"

# The Debian source has no git history, in which checkpatch would look up
# the commit a Fixes: tag names: that one check is left to a kernel tree.
ignore=
[ -d "$SRC/.git" ] || ignore=--ignore=UNKNOWN_COMMIT_ID
for p in "${FIXES[@]}"; do
	totals=$(cd "$SRC" && perl scripts/checkpatch.pl --strict $ignore "$p" 2>&1 |
		sed -n 's/^total: //p' || true)
	rc=1
	case "$totals" in "0 errors, 0 warnings, 0 checks, "*) rc=0 ;; esac
	result $rc "checkpatch --strict $(basename "$p"): ${totals:-no output}${ignore:+ (Fixes: id not looked up: no git history)}"
	grep -q '^Fixes: [0-9a-f]\{12\} ("' "$p"
	result $? "$(basename "$p") names the commit it fixes: $(sed -n 's/^Fixes: //p' "$p")"
done

# git am of each onto a repository of the pristine base's files.
# shellcheck disable=SC2046
base_repo "$SRC" "$WORK/fixes-am" "Linux $BASE" $(patched_files "${FIXES[@]}")
rc=0
git -C "$WORK/fixes-am" -c user.name=perf_aux -c user.email=perf_aux@localhost \
	am -q "${FIXES[@]}" > "$WORK/fixes-am.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || head -20 "$WORK/fixes-am.log"
result $rc "git am onto pristine Linux $(tree_version "$SRC"): ${#FIXES[@]} of ${#FIXES[@]}"
