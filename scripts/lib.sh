# SPDX-License-Identifier: GPL-2.0
#
# Shared by the perf_aux scripts: paths, the TARGET/KERNEL selectors and
# stage timing.  Sourced, never run.

PERF_AUX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Kernel trees, build directories and ccache live here, outside the clone, at
# a fixed path: ccache only hits when paths stay the same from run to run.
PERF_AUX_CACHE=${PERF_AUX_CACHE:-/var/cache/perf_aux}
PERF_AUX_OUT=${PERF_AUX_OUT:-$PERF_AUX_ROOT/out}

# Kernel bases: the Debian linux-source-<base> package each run starts from.
# The first is the default, mainline while it is the newest Debian ships.
PERF_AUX_BASES="7.3 7.2 6.12"
PERF_AUX_TARGETS="arm64-4k arm64-16k arm64-64k x86_64"
PERF_AUX_KERNELS="reference stock"
# A variant is a configuration (its own build directory) or a boot
# parameter on top of a target's default kernel.  nonroot runs the
# kselftests as an unprivileged user; fail_setup makes the fixtures that
# change a sysctl fail on purpose (scripts/initramfs/init); plain runs
# them as a farm's plain run does, without PERF_AUX_DESTRUCTIVE=1 (every
# other run sets it, so the destructive programs run there).  Two
# configurations carry what would otherwise be builds of their own: hugetlb
# has the page-table dump too, and sanitize builds lib/test_aux_pmu.c as a
# module, which the kselftests load themselves.
PERF_AUX_VARIANTS="default strict nohugevmalloc hugetlb sanitize nonroot
	fail_setup smp soak plain"
# perf/aux "Allocate non-contiguous AUX pages by default" reached Debian 6.12
# in 6.12.113; older sources lack PERF_PMU_CAP_AUX_PREFER_LARGE.
PERF_AUX_MIN_DEBIAN=6.12.113

# The default base, and BASE checked when set.
default_base()
{
	echo "${PERF_AUX_BASES%% *}"
}

export CCACHE_DIR="$PERF_AUX_CACHE/ccache"
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=8G

die()
{
	echo "perf_aux: error: $*" >&2
	exit 2
}

# stage NAME CMD...: runs CMD with a start line and an end line giving its
# time, and returns CMD's status.
stage()
{
	local name=$1 start rc=0

	shift
	start=$(date +%s)
	echo "==> $name"
	"$@" || rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "<== $name: $(($(date +%s) - start)) s"
	else
		echo "<== $name: $(($(date +%s) - start)) s, exit $rc"
	fi
	return "$rc"
}

check_target()
{
	case " $PERF_AUX_TARGETS " in
	*" $1 "*) ;;
	*) die "unknown TARGET='$1' (one of: $PERF_AUX_TARGETS)" ;;
	esac
}

check_base()
{
	case " $PERF_AUX_BASES " in
	*" $1 "*) ;;
	*) die "unknown BASE='$1' (one of: $PERF_AUX_BASES)" ;;
	esac
}

# The Debian suite that serves linux-source-BASE: 6.12 comes from the
# machine's own sources (bookworm-security), mainline from sid and
# experimental through a private sources list (scripts/deps.sh).
base_suite()
{
	case "$1" in
	6.12) echo "" ;;
	7.2) echo sid ;;
	*) echo experimental ;;
	esac
}

# The base a kernel version belongs to: its major.minor.
version_base()
{
	echo "$1" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/'
}

# The project's patches for BASE (hook-ups, reference) live here.
base_patches()
{
	echo "$PERF_AUX_ROOT/scripts/patches/$1"
}

check_kernel()
{
	case " $PERF_AUX_KERNELS " in
	*" $1 "*) ;;
	*) die "unknown KERNEL='$1' (one of: $PERF_AUX_KERNELS)" ;;
	esac
}

check_variant()
{
	case " $(echo $PERF_AUX_VARIANTS) " in
	*" $1 "*) ;;
	*) die "unknown VARIANT='$1' (one of:" $PERF_AUX_VARIANTS")" ;;
	esac
}

# The configuration a variant builds: soak boots the sanitize kernel.
variant_build()
{
	case "$1" in
	soak) echo sanitize ;;
	*) echo "$1" ;;
	esac
}

# The configuration fragment a variant adds, if any.
variant_config()
{
	case "$(variant_build "$1")" in
	hugetlb | sanitize)
		echo "$PERF_AUX_ROOT/scripts/config/variant-$(variant_build "$1").config" ;;
	esac
}

# The boot parameters a variant adds, if any.
variant_args()
{
	case "$1" in
	# The kselftests' strict mode (PERF_AUX_STRICT, set by the init);
	# the granule KUnit suite's is the kernel's configuration
	# (granule_strict).
	strict) echo perf_aux.strict ;;
	# Strict too: honouring nohugevmalloc in vmap() is a rule only strict
	# mode asserts (an AUX caller loses nothing by a larger mapping), and
	# this boot is the one that can show it kept.
	nohugevmalloc) echo nohugevmalloc perf_aux.strict ;;
	nonroot) echo perf_aux.user=65534 ;;
	plain) echo perf_aux.plain ;;
	fail_setup)
		echo perf_aux.fail_setup \
			perf_aux.tests=perf_aux:pagesize_test,perf_aux:map_test,perf_aux:fragment_test ;;
	# make soak: soak_test alone, for DURATION seconds.
	soak) echo perf_aux.tests=perf_aux:soak_test "perf_aux.soak=${DURATION:-600}" ;;
	esac
}

# The CPUs of a variant's kselftest boot: smp traces on four at once
# (smp_test), and sanitize runs the same under KASAN and lockdep.
variant_cpus()
{
	case "$1" in
	smp | sanitize | soak) echo 4 ;;
	*) echo 2 ;;
	esac
}

# granule_strict KERNEL VARIANT: whether the kernel builds the granule
# KUnit suite strict (CONFIG_VMAP_GRANULE_KUNIT_TEST_STRICT: a page vmap()
# maps smaller than its run allows fails instead of skipping).  The
# reference kernels carry large vmap (the project's patches, a posted
# series, the mutants of them) and so set it, as a tree carrying large
# vmap would; stock and custom trees only in the strict variants.
granule_strict()
{
	case "$1" in
	reference | series-* | mutant) return 0 ;;
	esac
	case "$2" in
	strict | nohugevmalloc) return 0 ;;
	esac
	return 1
}

# The build directory (inside the tree) of TARGET and VARIANT.  The strict
# variants of a kernel that is not strict otherwise share it: kbuild
# rebuilds only the objects that read the option (granule_strict), where
# a build directory of their own would miss ccache for every object.
build_dir()
{
	if [ -n "$(variant_config "$2")" ]; then
		echo ".build-$1-$(variant_build "$2")"
	else
		echo ".build-$1"
	fi
}

# vmalloc_args TREE bench|off: the boot parameters of lib/test_vmalloc.c,
# built into every kernel (scripts/config/boot.config).  "bench": the vmap
# benchmark alone (vmap_contig_chunks_test, whose run_test_mask bit is its
# index in the tree's test_case_array), five loops on one thread; "off":
# nothing, the parameter every other boot passes.
vmalloc_args()
{
	local i

	i=$(grep -oE '^[[:space:]]*\{ "[a-z0-9_]+",' "$1/lib/test_vmalloc.c" 2>/dev/null |
		grep -n '"vmap_contig_chunks_test"' | cut -d: -f1 || true)
	if [ "$2" = bench ] && [ -n "$i" ]; then
		echo "test_vmalloc.run_test_mask=$((1 << (i - 1)))" \
			test_vmalloc.nr_threads=1 test_vmalloc.test_loop_count=5 \
			test_vmalloc.test_repeat_count=1
	else
		echo test_vmalloc.run_test_mask=0
	fi
}

# console_reports LOG...: the kernel's reports in console logs (KASAN,
# lockdep, DEBUG_VM and WARN as BUG:/WARNING:, kmemleak's count), once each.
console_reports()
{
	cat "$@" 2>/dev/null |
		{ grep -E 'BUG:|WARNING:|kmemleak: [1-9][0-9]* unreferenced' || true; } |
		sort -u
}

# The name of a run's results: <kernel>-<base>-<target>[-<variant>].
result_name()
{
	if [ "$4" = default ]; then
		echo "$1-$2-$3"
	else
		echo "$1-$2-$3-$4"
	fi
}

# patched_files PATCH...: the files the patches change, one per line.  The
# name is the "+++" line's less its first component, as git am -p1 reads
# it: b/ from git, a/ in Andrew Morton's mm queue (quilt's "--- a/f~name",
# "+++ a/f"); a deleted file's from its "---" line.
patched_files()
{
	awk '/^--- / { old = $2 }
	     /^\+\+\+ / { f = $2 == "/dev/null" ? old : $2
			 sub(/^[^\/]*\//, "", f); print f }' "$@" | sort -u
}

# base_repo SRC REPO MESSAGE FILE...: a git repository REPO holding SRC's
# FILEs (those it has), committed as MESSAGE and tagged "base".  git am and
# git apply read nothing but the files a patch touches, so this is the base
# for them, without the cost of a whole tree in git.
base_repo()
{
	local src=$1 repo=$2 msg=$3 f

	shift 3
	rm -rf "$repo"
	mkdir -p "$repo"
	git -C "$repo" init -q -b perf_aux
	for f in "$@"; do
		[ -f "$src/$f" ] || continue
		mkdir -p "$repo/$(dirname "$f")"
		cp "$src/$f" "$repo/$f"
	done
	git -C "$repo" add -A
	git -C "$repo" -c user.name=perf_aux -c user.email=perf_aux@localhost \
		-c commit.gpgsign=false commit -q --allow-empty -m "$msg"
	git -C "$repo" tag base
}

# The kernel version of a source tree.
tree_version()
{
	make -s -C "$1" kernelversion 2>/dev/null
}

# The base of this run: BASE, or the version of a KERNEL_SRC tree.
run_base()
{
	if [ -n "${KERNEL_SRC:-}" ]; then
		version_base "$(tree_version "$KERNEL_SRC")"
	else
		echo "${BASE:-$(default_base)}"
	fi
}

# The tree a kernel is built in: <base>-<kernel>, "custom", or
# <base>-series for any series (a new series rebuilds what it changes).
tree_name()
{
	case "$1" in
	custom) echo custom ;;
	series-*) echo "$2-series" ;;
	*) echo "$2-$1" ;;
	esac
}

# The tree of kernel NAME of this run's base.
tree_dir()
{
	echo "$PERF_AUX_CACHE/trees/$(tree_name "$1" "$(run_base)")"
}

# Per-target facts: kernel ARCH, cross compiler prefix, QEMU and its options.
target_arch()
{
	case "$1" in
	arm64-*) echo arm64 ;;
	*) echo x86_64 ;;
	esac
}

# The CPU QEMU emulates for arm64 targets.  "max" alone has pointer
# authentication with the architected QARMA5, which TCG emulates slowly;
# kunit.py of 7.x dropped pauth-impdef=on from its arm64 configuration,
# making a KUnit boot 4x slower (21 s instead of 5 s on 7.3).
ARM64_QEMU_CPU=max,pauth-impdef=on

# The guests' memory: the kselftest boot, the KUnit boot (over kunit.py's
# own -m 1024) and the LAVA QEMU jobs (their template's memory; a host
# test keeps the two equal).  Which cases have the memory to run depends
# on it, so runs compared case by case must have the same.  2 GiB: at 16K
# pages a NO_SG PMD buffer needs a free 32 MiB MAX_PAGE_ORDER block, which
# 1 GiB did not always keep.
GUEST_MEMORY_MIB=2048

target_cross()
{
	case "$1" in
	arm64-*) echo aarch64-linux-gnu- ;;
	*) echo "" ;;
	esac
}

# series_mails: the mails of SERIES (an mbox, or a directory of patches as
# git format-patch writes them), in order, cover letters left out.
series_mails()
{
	if [ -d "$SERIES" ]; then
		find "$SERIES" -maxdepth 1 -type f \( -name '*.patch' -o -name '*.mbx' \
			-o -name '*.eml' \) ! -name '*cover-letter*' | LC_ALL=C sort
	else
		echo "$SERIES"
	fi
}

# series_subject: the subject of SERIES, unfolded: its cover letter's where
# it has one (a directory's 0000-*, or a "0/N" mail), else its first mail's.
series_subject()
{
	local f

	f=$(find "$SERIES" -maxdepth 1 -type f -name '*cover-letter*' 2>/dev/null | head -1)
	[ -n "$f" ] || f=$(series_mails | head -1)
	awk '/^Subject:/ { s = $0; more = 1; next }
	     more && /^[ \t]/ { s = s $0; next }
	     more { print s; exit }' "$f" |
		sed -E 's/^Subject: *//; s/[ \t]+/ /g'
}

# series_version: v<N> of "[PATCH vN ...]", v1 without one.
series_version()
{
	local v

	v=$(series_subject | sed -nE 's/^\[[^]]*\<v([0-9]+)\>[^]]*\].*/\1/p')
	echo "v${v:-1}"
}

# The kernel name used in result paths: the KERNEL selector, "custom" for a
# tree given with KERNEL_SRC, "series-vN" for the reference of a SERIES run.
kernel_name()
{
	if [ -n "${KERNEL_SRC:-}" ]; then
		echo custom
	elif [ -n "${SERIES:-}" ] && [ "$1" = reference ]; then
		echo "series-$(series_version)"
	else
		echo "$1"
	fi
}

# without_kvm CMD...: CMD with /dev/kvm hidden.  kunit.py asks QEMU for KVM
# first.  Where a machine offers it nested, the x86_64 guest died of an
# "emulation failure" (cmpxchg16b); the kselftest boot runs under TCG, and
# so do kunit.py's.
without_kvm()
{
	if [ -e /dev/kvm ]; then
		unshare --mount -- sh -c \
			'mount --bind /dev/null /dev/kvm && exec "$@"' sh "$@"
	else
		"$@"
	fi
}

# kunit_py DIR LOG ARG...: the kunit.py of the tree in the current directory
# with build directory DIR and ccache (CROSS: the cross-compiler prefix),
# under TCG, its output in LOG.  The exit status is kunit.py's.
kunit_py()
{
	local build=$1 log=$2 rc=0
	local -a opts=()

	shift 2
	case $1 in
	run) opts=(--jobs="$(nproc)" --timeout=900) ;;
	build) opts=(--jobs="$(nproc)") ;;
	exec) opts=(--timeout=900) ;;
	esac
	without_kvm timeout 1800 python3 tools/testing/kunit/kunit.py "$@" \
		--build_dir="$build" "${opts[@]}" \
		--make_options="CC=ccache ${CROSS:-}gcc" > "$log" 2>&1 || rc=$?
	return "$rc"
}
