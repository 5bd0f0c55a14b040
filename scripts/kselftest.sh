#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the perf_aux kselftests with the tree's own selftests build (static,
# cross-compiled), packs them with busybox and scripts/initramfs/init into an
# initramfs, and boots it on the kernel scripts/kunit.sh built for TARGET.
# The console log goes to LOG.
#
# Usage: scripts/kselftest.sh NAME TARGET VARIANT LOG [KERNEL_ARG...]
# KSELFTEST_TARGETS: the selftest collections to install (perf_aux; the
# mutant runs add the peer perf_events).
# KSELFTEST_ROOTFS=DIR: boot the Debian root filesystem DIR instead (scripts/
# deps.sh testdefs), the kselftests where KernelCI's root filesystems have
# them, test-definitions' files from TESTDEFS_DIR, and scripts/initramfs/
# testdefs-init as /init: the way KernelCI and LKFT run them.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

KSELFTEST_TARGETS=${KSELFTEST_TARGETS:-perf_aux}

build_selftests()
{
	local tree=$1 build=$2 arch=$3 cross=$4

	make -s -C "$tree" O="$build" ARCH="$arch" ${cross:+CROSS_COMPILE="$cross"} \
		headers_install
	rm -rf "$build/kselftest_install"
	make -s -C "$tree/tools/testing/selftests" O="$build" ARCH="$arch" \
		${cross:+CROSS_COMPILE="$cross"} TARGETS="$KSELFTEST_TARGETS" \
		USERLDFLAGS=-static KSFT_INSTALL_PATH="$build/kselftest_install" \
		install
	if [ -s "$build/kselftest_install/kselftest-list.txt" ]; then
		echo "kselftests:" $(cut -d: -f2 "$build/kselftest_install/kselftest-list.txt")
	else
		echo "kselftests: TARGETS=$KSELFTEST_TARGETS holds no test yet"
	fi
}

# Lines for the kernel's usr/gen_init_cpio: no root, no mknod needed.
cpio_list()
{
	local busybox=$1 ksft=$2 f

	printf 'dir /%s 0755 0 0\n' dev proc sys tmp bin sbin kselftest
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "file /bin/busybox $busybox 0755 0 0"
	echo "file /init $PERF_AUX_ROOT/scripts/initramfs/init 0755 0 0"
	(cd "$ksft" && find . -mindepth 1 | sort) | while read -r f; do
		f=${f#./}
		if [ -d "$ksft/$f" ]; then
			echo "dir /kselftest/$f 0755 0 0"
		else
			echo "file /kselftest/$f $ksft/$f $(stat -c %a "$ksft/$f") 0 0"
		fi
	done
}

# Lines for gen_init_cpio: the tree under DIR (lib/modules/...) at /.
modules_list()
{
	local dir=$1 f

	(cd "$dir" && find . -mindepth 1 | sort) | while read -r f; do
		f=${f#./}
		if [ -L "$dir/$f" ]; then
			continue
		elif [ -d "$dir/$f" ]; then
			echo "dir /$f 0755 0 0"
		else
			echo "file /$f $dir/$f 0644 0 0"
		fi
	done
}

# rootfs_initramfs ROOTFS KSELFTESTS OUT: the Debian root filesystem with
# the kselftests and test-definitions in it, as a gzipped cpio in OUT.
rootfs_initramfs()
{
	local root=$1 ksft=$2 out=$3 work

	work=$(mktemp -d)
	cp -a "$root/." "$work/"
	mkdir -p "$work/opt/kselftests"
	cp -a "$ksft" "$work/opt/kselftests/mainline"
	cp -a "$TESTDEFS_DIR" "$work/opt/test-definitions"
	install -m 0755 "$PERF_AUX_ROOT/scripts/initramfs/testdefs-init" "$work/init"
	(cd "$work" && find . -mindepth 1 | cpio -o -H newc --quiet) | gzip -1 > "$out"
	rm -rf "$work"
}

boot()
{
	local target=$1 build=$2 initrd=$3 log=$4 cpus=$5 cmdline
	local -a qemu

	shift 5
	# lib/test_vmalloc.c runs in the KUnit boot only (scripts/kunit.sh).
	cmdline="panic=-1 kunit.enable=0 $(vmalloc_args - off) rdinit=/init $*"
	case "$target" in
	arm64-*)
		qemu=(qemu-system-aarch64 -machine virt -cpu "$ARM64_QEMU_CPU"
		      -kernel "$build/arch/arm64/boot/Image.gz"
		      -append "console=ttyAMA0 $cmdline")
		;;
	*)
		qemu=(qemu-system-x86_64 -kernel "$build/arch/x86/boot/bzImage"
		      -append "console=ttyS0 $cmdline")
		;;
	esac
	# Plus a variant's own time (make soak DURATION=..., sanitize).
	timeout "$((1200 + ${BOOT_EXTRA_SECONDS:-0}))" "${qemu[@]}" -nodefaults -m "$GUEST_MEMORY_MIB" -smp "$cpus" -initrd "$initrd" \
		-no-reboot -nographic -serial stdio < /dev/null > "$log" 2>&1
}

main()
{
	local name=$1 target=$2 variant=$3 log=$4 tree build arch cross busybox

	shift 4
	tree=$(tree_dir "$name")
	build="$tree/$(build_dir "$target" "$variant")"
	arch=$(target_arch "$target")
	cross=$(target_cross "$target")
	case "$target" in
	arm64-*) busybox="$PERF_AUX_CACHE/busybox/arm64/busybox" ;;
	*) busybox=/bin/busybox ;;
	esac
	[ -x "$busybox" ] || die "no busybox for $target (run scripts/deps.sh $target)"

	stage "build kselftests $name-$target" \
		build_selftests "$tree" "$build" "$arch" "$cross"
	if [ -n "${KSELFTEST_ROOTFS:-}" ]; then
		rootfs_initramfs "$KSELFTEST_ROOTFS" "$build/kselftest_install" \
			"$build/initramfs-rootfs.cpio.gz"
		stage "boot test-definitions $(result_name "$name" "$(run_base)" "$target" "$variant")" \
			boot "$target" "$build" "$build/initramfs-rootfs.cpio.gz" "$log" \
			"$(variant_cpus "$variant")" "$@"
		grep '^PERF_AUX: ' "$log" || die "the test-definitions boot printed nothing of ours"
		return
	fi
	cpio_list "$busybox" "$build/kselftest_install" > "$build/initramfs.list"
	# A kernel with modules: they go to /lib/modules, for modprobe.
	if grep -q '^CONFIG_MODULES=y' "$build/.config"; then
		rm -rf "$build/modules_install"
		make -s -C "$tree" O="$build" ARCH="$arch" ${cross:+CROSS_COMPILE="$cross"} \
			INSTALL_MOD_PATH="$build/modules_install" INSTALL_MOD_STRIP=1 \
			modules_install
		modules_list "$build/modules_install" >> "$build/initramfs.list"
	fi
	"$build/usr/gen_init_cpio" "$build/initramfs.list" | gzip -1 \
		> "$build/initramfs.cpio.gz"
	# A soak's own time on top; under the sanitizers fragment_test's five
	# fills alone take 9 to 16 minutes in a 2 GiB guest.
	case "$variant" in
	soak) export BOOT_EXTRA_SECONDS=${DURATION:-600} ;;
	sanitize) export BOOT_EXTRA_SECONDS=1200 ;;
	esac
	# shellcheck disable=SC2046
	stage "boot kselftests $(result_name "$name" "$(run_base)" "$target" "$variant")" \
		boot "$target" "$build" "$build/initramfs.cpio.gz" "$log" \
		"$(variant_cpus "$variant")" "$@" \
		$(variant_args "$variant")
	grep -q '^PERF_AUX: ' "$log" || {
		tail -30 "$log"
		die "the kselftest boot of $name-$target printed nothing of ours"
	}
	grep '^PERF_AUX: ' "$log"
}

main "$@"
