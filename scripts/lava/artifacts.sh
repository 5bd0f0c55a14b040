# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What a QEMU job of lava-jobs/ takes from a build of the pipeline, for
# scripts/lava/check.sh (lava-run) and scripts/lava/submit.sh (a LAVA
# server): the kernel options LAVA's overlay disk needs, the ramdisk, and
# this checkout's lava-jobs/ as the git repository LAVA fetches the test
# definition from.  Sourced after scripts/lib.sh, never run.

# kernel_ready BUILD: the kernel has what LAVA's QEMU overlay disk needs.
kernel_ready()
{
	local opt

	for opt in PCI_HOST_GENERIC VIRTIO_PCI VIRTIO_BLK EXT4_FS EXT4_USE_FOR_EXT2; do
		grep -q "^CONFIG_$opt=y" "$1/.config" 2>/dev/null || {
			echo "CONFIG_$opt"
			return 1
		}
	done
}

# ramdisk BUILD DIR: a copy of the pipeline's initramfs in DIR or, when it
# was packed with another init (before scripts/initramfs/init had its LAVA
# mode), the same list packed again with today's init (the kselftests are
# the same files).
ramdisk()
{
	local build=$1 dir=$2

	if zcat "$build/initramfs.cpio.gz" | cpio -i --quiet --to-stdout init |
	   cmp -s - "$PERF_AUX_ROOT/scripts/initramfs/init"; then
		cp "$build/initramfs.cpio.gz" "$dir/initramfs.cpio.gz" || return 1
		echo "$dir/initramfs.cpio.gz"
		return
	fi
	echo "# $build/initramfs.cpio.gz has another init: packed again from" \
	     "initramfs.list" >&2
	"$build/usr/gen_init_cpio" "$build/initramfs.list" | gzip -1 \
		> "$dir/initramfs.cpio.gz" || return 1
	echo "$dir/initramfs.cpio.gz"
}

# testdefs DIR: a git repository holding this checkout's lava-jobs/, as a
# lab's clone of the project would (LAVA fetches test definitions by git).
testdefs()
{
	local repo=$1/testdefs

	rm -rf "$repo"
	mkdir -p "$repo"
	cp -r "$PERF_AUX_ROOT/lava-jobs" "$repo/"
	git -C "$repo" init -q -b main &&
		git -C "$repo" add -A &&
		git -C "$repo" -c user.name=perf_aux -c user.email=perf_aux@localhost \
			commit -q -m "lava-jobs of $(git -C "$PERF_AUX_ROOT" rev-parse --short HEAD)" ||
		return 1
	echo "$repo"
}
