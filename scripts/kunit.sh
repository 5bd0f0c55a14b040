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
	local -a tcg=()

	shift
	# kunit.py asks QEMU for KVM first.  Where a machine offers it nested,
	# the x86_64 guest died of an "emulation failure" (cmpxchg16b); the
	# kselftest boot runs under TCG, and so does this one: /dev/kvm is
	# hidden from it.
	[ ! -e /dev/kvm ] || tcg=(unshare --mount -- sh -c \
		'mount --bind /dev/null /dev/kvm && exec "$@"' sh)
	timeout 900 "${tcg[@]}" python3 tools/testing/kunit/kunit.py exec "$@" \
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

# With PERF_AUX_PEERS=1, mutant kernels also carry the peer test_vmalloc
# (scripts/config/peers.config).
peers_config()
{
	! with_peers "$1" || echo "$PERF_AUX_ROOT/scripts/config/peers.config"
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
	build=$(kernel_build_dir "$name" "$target" "$variant")
	common=(--arch="$arch" --build_dir="$build"
		${cross:+--cross_compile="$cross"})
	for c in "$PERF_AUX_ROOT"/kernel/events/ring_buffer_kunit.kunitconfig \
		 "$PERF_AUX_ROOT"/mm/tests/vmap_granule_kunit.kunitconfig \
		 "$PERF_AUX_ROOT/scripts/config/boot.config" \
		 "$PERF_AUX_ROOT/scripts/config/arch-$arch.config" \
		 $(peers_config "$name") \
		 "$PERF_AUX_ROOT/scripts/config/$target.config" \
		 $(variant_config "$variant"); do
		[ -f "$c" ] && configs+=("--kunitconfig=$c")
	done
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

main "$@"
