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
#
# scripts/kunit.sh --series [TREE] runs kunit.py as its users do, in TREE
# (default: the plain base with `make series` applied, as series.sh --check
# leaves it): each suite's kunitconfig with --arch=x86_64 and with
# --arch=arm64, and on UML (kunit.py's default), with kunit.py's defaults
# otherwise; then KernelCI's kunit-x86_64 form (config, build, exec --json
# with kunit.py's default kunitconfig, CONFIG_KUNIT_ALL_TESTS=y), our
# suites' results read from its JSON; and a UML build with every test
# option of the series UML can have.  KUNITPY_ARCHS (default "x86_64 arm64
# um") chooses the architectures of the kunitconfig runs, KUNITPY_KERNELCI=0
# leaves KernelCI's form out.  One line per run; build directories in
# $PERF_AUX_CACHE/kunitpy/.  Exit 1 if a run that should pass did not.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

# ccache_line: how many compiler calls of the build ccache answered, so that
# a change that costs the next build its cache shows in every log.
ccache_line()
{
	ccache --print-stats | awk '
		/^(direct|preprocessed)_cache_hit\t/ { hit += $2 }
		/^cache_miss\t/ { miss += $2 }
		END {
			n = hit + miss
			printf "ccache: %d of %d compilations hit (%d %%)\n", hit, n,
				n ? 100 * hit / n : 100
		}'
}

kunit_build()
{
	local log=$1

	shift
	ccache --zero-stats > /dev/null
	python3 tools/testing/kunit/kunit.py build "$@" > "$log" 2>&1 || {
		tail -40 "$log"
		return 2
	}
	ccache_line
}

kunit_exec()
{
	local log=$1 rc=0

	shift
	without_kvm timeout 900 python3 tools/testing/kunit/kunit.py exec "$@" \
		> "$log" 2>&1 || rc=$?
	grep -E '^\[..:..:..\] (Testing complete|Elapsed)' "$log" || true
	return "$rc"
}

# kmemleak takes a stale pointer left deep in a kernel stack for a
# reference: an object leaked by a system call stays unseen while the task
# that made the call lives (a failed AUX mmap()'s page array did, in
# fault_test).  Erasing the stack on return to user space (GCC's stackleak
# plugin) leaves only live pointers there.  The option is KSTACK_ERASE
# since 6.16, GCC_PLUGIN_STACKLEAK before: the tree's Kconfig says which.
stack_erase_option()
{
	if grep -q '^config KSTACK_ERASE$' "$1/security/Kconfig.hardening"; then
		echo CONFIG_KSTACK_ERASE
	else
		echo CONFIG_GCC_PLUGIN_STACKLEAK
	fi
}

# ccache hashes a -fplugin= file by its size and mtime (compiler_check),
# and each build directory builds its own plugin: no build with plugins
# served another (a mutant's sanitize build found 10 % of its objects in
# the reference's).  The plugin's path is left out of the hash and the
# plugins' sources go in instead, by content.
plugin_sources_hashed()
{
	local files

	files=$(printf '%s:' "$1"/scripts/gcc-plugins/*.[ch])
	export CCACHE_IGNOREOPTIONS='-fplugin=*'
	export CCACHE_EXTRAFILES=${files%:}
}

# build_key ARG...: what the kernel in the build directory is made of, for
# a check that boots one build several times (the strict, nohugevmalloc and
# smp boots of the default build): the check (PERF_AUX_CHECK_ID, set by
# scripts/check.sh), the tree's recipe (scripts/kernel-tree.sh: sources,
# patches, overlay) and kunit.py's build arguments with the configuration
# fragments' content.  A later boot in the same check with the same key
# skips kunit.py build, whose Kconfig run and no-op make cost 16 s.  Empty
# outside a check: make run always builds, so an edited tree is rebuilt.
build_key()
{
	local a

	[ -n "${PERF_AUX_CHECK_ID:-}" ] || return 0
	{
		echo "$PERF_AUX_CHECK_ID"
		cat "$tree/.perf_aux-recipe"
		for a in "$@"; do
			echo "$a"
			case "$a" in
			--kunitconfig=*) cat "${a#--kunitconfig=}" ;;
			esac
		done
	} | sha256sum | cut -d' ' -f1
}

main()
{
	local name=$1 target=$2 variant=$3 log=$4 tree arch cross build key rc=0
	local -a common configs=() kargs=(--kernel_args=panic=-1)

	shift 4
	check_target "$target"
	check_variant "$variant"
	tree=$(tree_dir "$name")
	arch=$(target_arch "$target")
	cross=$(target_cross "$target")
	build=$(build_dir "$target" "$variant")
	common=(--arch="$arch" --build_dir="$build"
		${cross:+--cross_compile="$cross"})
	for c in "$PERF_AUX_ROOT"/kernel/events/ring_buffer_kunit.kunitconfig \
		 "$PERF_AUX_ROOT"/mm/tests/vmap_granule_kunit.kunitconfig \
		 "$PERF_AUX_ROOT/scripts/config/boot.config" \
		 "$PERF_AUX_ROOT/scripts/config/arch-$arch.config" \
		 "$PERF_AUX_ROOT/scripts/config/$target.config" \
		 $(variant_config "$variant"); do
		[ -f "$c" ] && configs+=("--kunitconfig=$c")
	done
	# The vmap benchmark, unless the caller gives lib/test_vmalloc.c
	# parameters of its own (scripts/check.sh: the peer, or none).
	# shellcheck disable=SC2046
	case " $* " in
	*" test_vmalloc."*) ;;
	*) set -- $(vmalloc_args "$tree" bench) "$@" ;;
	esac
	# shellcheck disable=SC2046
	for a in "$@" $(variant_args "$variant"); do
		kargs+=("--kernel_args=$a")
	done

	# The sanitize configuration: test_aux_pmu=m over boot.config's =y,
	# and the kernel stack erased on each return to user space.
	if [ "$(variant_build "$variant")" = sanitize ]; then
		configs+=(--kconfig_add=CONFIG_TEST_AUX_PMU=m)
		configs+=(--kconfig_add=CONFIG_GCC_PLUGINS=y
			  "--kconfig_add=$(stack_erase_option "$tree")=y")
		plugin_sources_hashed "$tree"
	fi

	if granule_strict "$name" "$variant"; then
		configs+=(--kconfig_add=CONFIG_VMAP_GRANULE_KUNIT_TEST_STRICT=y)
	else
		configs+=(--kconfig_add=CONFIG_VMAP_GRANULE_KUNIT_TEST_STRICT=n)
	fi

	cd "$tree"
	configs+=(--make_options="CC=ccache ${cross}gcc")
	key=$(build_key "${common[@]}" "${configs[@]}")
	if [ -n "$key" ] && [ "$(cat "$build/.perf_aux-built" 2>/dev/null)" = "$key" ]; then
		echo "build $(tree_name "$name" "$(run_base)") $build: built earlier in this check, unchanged"
	else
		rm -f "$build/.perf_aux-built"
		stage "build $(tree_name "$name" "$(run_base)") $build" kunit_build "$log.build" \
			"${common[@]}" --jobs="$(nproc)" "${configs[@]}" || exit 2
		[ -z "$key" ] || echo "$key" > "$build/.perf_aux-built"
	fi
	# Appended after kunit.py's own -m and -cpu, which they override.
	kargs+=("--qemu_args=-m $GUEST_MEMORY_MIB")
	[ "$arch" != arm64 ] || kargs+=("--qemu_args=-cpu $ARM64_QEMU_CPU")
	stage "KUnit $(result_name "$name" "$(run_base)" "$target" "$variant")" kunit_exec "$log.exec" "${common[@]}" \
		--timeout=600 "${kargs[@]}" || rc=$?
	cp "$build/test.log" "$log"
	[ "$rc" -eq 0 ] || exit 1
}

# The suites of the series: kunitconfig and KUnit suite name.
SERIES_SUITES="kernel/events/ring_buffer_kunit.kunitconfig:perf_aux_alloc
	mm/tests/vmap_granule_kunit.kunitconfig:vmap_granule"

# summary LOG: kunit.py's verdict, or the reason it stopped.
summary()
{
	grep -E '^\[..:..:..\] (Testing complete\.|Elapsed time)' "$1" |
		sed 's/^\[..:..:..\] //' | paste -sd' ' - | grep . ||
		grep -m1 -iE 'error|not satisfied|missing' "$1" || tail -1 "$1"
}

series_runs()
{
	local tree=${1:-$PERF_AUX_CACHE/series/${BASE:-$(default_base)}/tree}
	local dirs=$PERF_AUX_CACHE/kunitpy log entry kc suite arch archarg rc fail=0
	local out=$PERF_AUX_OUT/kunitpy

	[ -x "$tree/tools/testing/kunit/kunit.py" ] ||
		die "no kernel tree with kunit.py at $tree (scripts/series.sh --check)"
	# kunit.py makes its build directory with os.mkdir(): the parent first.
	mkdir -p "$out" "$dirs"
	cd "$tree"
	for entry in $SERIES_SUITES; do
		kc=${entry%%:*} suite=${entry##*:}
		for arch in ${KUNITPY_ARCHS:-x86_64 arm64 um}; do
			log=$out/$arch-$suite.log
			CROSS=
			[ "$arch" != arm64 ] || CROSS=aarch64-linux-gnu-
			# UML as a maintainer gets it: kunit.py's default.
			archarg=
			[ "$arch" = um ] || archarg=--arch=$arch
			rc=0
			kunit_py "$dirs/$arch-$suite" "$log" run --kunitconfig="$kc" \
				$archarg ${CROSS:+--cross_compile=$CROSS} || rc=$?
			case "$arch:$suite" in
			um:perf_aux_alloc)
				# UML has no perf events: kunit.py refuses, and says why.
				echo "kunit.py run (UML) --kunitconfig=$kc: rc=$rc: UML has no perf events: kunit.py: $(grep -m1 '^Missing:' "$log")"
				grep -q '^Missing:.*CONFIG_PERF_EVENTS' "$log" || fail=1 ;;
			*)
				echo "kunit.py run ${archarg:-(UML)} --kunitconfig=$kc: rc=$rc: $(summary "$log")"
				[ "$rc" -eq 0 ] || fail=1 ;;
			esac
		done
	done

	# UML with every test option of the series it can have, built: the
	# kernel test robot's allmodconfig and randconfig builds of UML reach
	# them.  Those that need perf events cannot be set there; kunit.py
	# names them.
	log=$out/um-all-options.log
	rc=0
	kunit_py "$dirs/um-all" "$log" build \
		--kunitconfig=mm/tests/vmap_granule_kunit.kunitconfig \
		--kconfig_add=CONFIG_VMAP_GRANULE_KUNIT_TEST_STRICT=y \
		--kconfig_add=CONFIG_TEST_VMALLOC=y || rc=$?
	echo "kunit.py build (UML) with every test option UML has: rc=$rc"
	[ "$rc" -eq 0 ] || fail=1
	[ "${KUNITPY_KERNELCI:-1}" = 1 ] || return "$fail"

	# KernelCI's kunit-x86_64: its three steps, its JSON.
	log=$out/kernelci-x86_64.log
	CROSS=
	rc=0
	{ kunit_py "$dirs/x86_64-all" "$log.config" config --arch=x86_64 &&
	  kunit_py "$dirs/x86_64-all" "$log.build" build --arch=x86_64 &&
	  kunit_py "$dirs/x86_64-all" "$log" exec --arch=x86_64 \
		--json="$out/kernelci-x86_64.json"; } || rc=$?
	echo "kunit.py config/build/exec --arch=x86_64 --json (KernelCI): rc=$rc: $(summary "$log")"
	# shellcheck disable=SC2046
	python3 - "$out/kernelci-x86_64.json" $(for e in $SERIES_SUITES; do echo "${e##*:}"; done) <<'PY' || fail=1
import json, sys
from collections import Counter

def groups(g):
    yield g
    for s in g.get('sub_groups', []):
        yield from groups(s)

try:
    root = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f'KernelCI JSON: {e}')
found = {g['name']: g for g in groups(root)}
ok = True
for name in sys.argv[2:]:
    g = found.get(name)
    if g is None:
        print(f'KernelCI JSON: suite {name} not run')
        ok = False
        continue
    # Parameterised cases are groups of their own, below the suite.
    n = Counter(t['status'] for s in groups(g) for t in s.get('test_cases', []))
    print(f'KernelCI JSON: {name}: {sum(n.values())} cases, '
          + ', '.join(f'{v} {k}' for k, v in sorted(n.items())))
    ok = ok and not n.get('FAIL') and not n.get('ERROR')
sys.exit(0 if ok else 1)
PY
	return "$fail"
}

if [ "${1:-}" = --series ]; then
	shift
	series_runs "$@"
	exit
fi
main "$@"
