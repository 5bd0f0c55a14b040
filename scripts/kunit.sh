#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the kernel of tree NAME for TARGET with the tree's own kunit.py and
# runs the KUnit suites at boot under QEMU.  The same build serves the
# kselftest boot (scripts/kselftest.sh): the kunitconfig is the suites'
# .kunitconfig files plus scripts/config/boot.config and the target's and
# variant's fragments.  The console log, KTAP included, is copied to LOG.
#
# Usage: scripts/kunit.sh NAME TARGET VARIANT LOG [KERNEL_ARG...]
# Exit: 0 all passed, 1 some test failed or crashed, 2 build error.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

kunit_build()
{
	local log=$1

	shift
	python3 tools/testing/kunit/kunit.py build "$@" > "$log" 2>&1 || {
		tail -40 "$log"
		return 2
	}
}

kunit_exec()
{
	local log=$1 rc=0

	shift
	timeout 900 python3 tools/testing/kunit/kunit.py exec "$@" \
		> "$log" 2>&1 || rc=$?
	grep -E '^\[..:..:..\] (Testing complete|Elapsed)' "$log" || true
	return "$rc"
}

# The kernels lava-jobs/ boot also take what LAVA's overlay disk needs:
# the reference build of arm64-4k and arm64-16k that the default and the
# boot-parameter variants share.
lava_config()
{
	[ -z "$(variant_config "$3")" ] || return 0
	case "$1/$2" in
	reference/arm64-4k | reference/arm64-16k)
		echo "$PERF_AUX_ROOT/scripts/config/lava.config" ;;
	esac
}

# Mutant kernels also carry the peer test_vmalloc (scripts/config/peers.config).
peers_config()
{
	[ "$1" != mutant ] || echo "$PERF_AUX_ROOT/scripts/config/peers.config"
}

main()
{
	local name=$1 target=$2 variant=$3 log=$4 tree arch cross build rc=0
	local -a common configs=() kargs=(--kernel_args=panic=-1)

	shift 4
	check_target "$target"
	check_variant "$variant"
	tree="$PERF_AUX_CACHE/trees/$name"
	arch=$(target_arch "$target")
	cross=$(target_cross "$target")
	build=$(build_dir "$target" "$variant")
	common=(--arch="$arch" --build_dir="$build"
		${cross:+--cross_compile="$cross"})
	for c in "$PERF_AUX_ROOT"/lib/tests/.kunitconfig \
		 "$PERF_AUX_ROOT"/mm/tests/.kunitconfig \
		 "$PERF_AUX_ROOT/scripts/config/boot.config" \
		 $(lava_config "$name" "$target" "$variant") \
		 $(peers_config "$name") \
		 "$PERF_AUX_ROOT/scripts/config/$target.config" \
		 $(variant_config "$variant"); do
		[ -f "$c" ] && configs+=("--kunitconfig=$c")
	done
	# shellcheck disable=SC2046
	for a in "$@" $(variant_args "$variant"); do
		kargs+=("--kernel_args=$a")
	done

	cd "$tree"
	stage "build $name-$target $build" kunit_build "$log.build" "${common[@]}" \
		--make_options="CC=ccache ${cross}gcc" --jobs="$(nproc)" \
		"${configs[@]}" || exit 2
	stage "KUnit $(result_name "$name" "$target" "$variant")" kunit_exec "$log.exec" "${common[@]}" \
		--timeout=600 "${kargs[@]}" || rc=$?
	cp "$build/test.log" "$log"
	[ "$rc" -eq 0 ] || exit 1
}

main "$@"
