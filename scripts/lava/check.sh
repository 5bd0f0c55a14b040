#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The LAVA checks (issue 6), one line each, "ok - lava: ..." or
# "not ok - lava: ...":
#  1. lava-jobs/jobs/ are what lava-jobs/generate.py renders from
#     lava-jobs/lab.example.yaml;
#  2. lava_common.schemas accepts every job and the test definition, and
#     rejects each broken variant (REJECTS in scripts/perf_aux_results/lava_jobs.py);
#     the dispatcher builds the pipeline of each job it cannot run here
#     (lava-run --validate on a stand-in device of the job's type);
#  3. the real dispatcher (lava-run) runs the QEMU arm64-4k job on the kernel
#     and ramdisk the pipeline built, and the cases LAVA records equal the
#     direct run's, group by group (the 16K job too, where its kernel has
#     the virtio disk LAVA's overlay needs).
# Exit 0 iff no "not ok".  Installs what it needs (scripts/deps.sh lava).
#
# Usage: scripts/lava/check.sh [--schema] [BUILD_DIR [RESULTS_DIR]]
#   --schema     checks 1 and 2 only (no lava-run of a job: make check)
#   BUILD_DIR    an arm64 build (Image.gz, initramfs.cpio.gz); default the
#                reference arm64-4k of BASE (default base), and arm64-16k too
#   RESULTS_DIR  its direct run's KTAP (scripts/results.py); default
#                out/results/reference-<base>-arm64-4k

set -uo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/artifacts.sh"

SCHEMA_ONLY=
if [ "${1:-}" = --schema ]; then
	SCHEMA_ONLY=1
	shift
fi
LAVA_BASE=${BASE:-$(default_base)}
BUILD_4K=${1:-$PERF_AUX_CACHE/trees/$LAVA_BASE-reference/.build-arm64-4k}
RESULTS_4K=${2:-$PERF_AUX_OUT/results/reference-$LAVA_BASE-arm64-4k}
BUILD_16K=$PERF_AUX_CACHE/trees/$LAVA_BASE-reference/.build-arm64-16k
RESULTS_16K=$PERF_AUX_OUT/results/reference-$LAVA_BASE-arm64-16k
LAVA_CACHE=$PERF_AUX_CACHE/lava
WORK=$PERF_AUX_OUT/lava
# Debian's python: lava_common needs python3-voluptuous.
PY=/usr/bin/python3
HELPER="$PY $PERF_AUX_ROOT/scripts/lava/lava_results.py"
# What lava-run may take, boot and both test runs included.
LAVA_TIMEOUT=1500

bad=0

# verdict RC WHAT: one check line.
verdict()
{
	if [ "$1" -eq 0 ]; then
		echo "ok - lava: $2"
	else
		echo "not ok - lava: $2"
		bad=1
	fi
}

# helper ARGS...: lava_results.py's own check lines.
helper()
{
	$HELPER "$@" || bad=1
}

check_generated()
{
	local tmp rc=0

	tmp=$(mktemp -d)
	$PY "$PERF_AUX_ROOT/lava-jobs/generate.py" --out "$tmp" > /dev/null &&
		diff -r "$tmp" "$PERF_AUX_ROOT/lava-jobs/jobs" > "$tmp.diff" || rc=1
	verdict $rc "lava-jobs/jobs/ are generate.py's rendering of lab.example.yaml"
	[ $rc -eq 0 ] || sed 's/^/# /' "$tmp.diff" | head -20
	rm -rf "$tmp" "$tmp.diff"
}

# lava_run PAGES BUILD RESULTS: the QEMU job of arm64-PAGES through
# lava-run, then its results against the direct run.
lava_run()
{
	local pages=$1 build=$2 results=$3 tag="lava-run qemu arm64-$1"
	local dir=$WORK/qemu-arm64-$1 missing initrd repo start rc=0

	missing=$(kernel_ready "$build") || {
		echo "ok - lava: $tag # SKIP kernel has no $missing (scripts/config/lava.config, rebuild arm64-$pages)"
		return
	}
	if ! ls "$results"/*.ktap > /dev/null 2>&1; then
		verdict 1 "$tag: no direct-run results in $results (make run TARGET=arm64-$pages)"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	# Copies, taken together: a make run meanwhile rebuilds the kernel and
	# empties the results directory.
	mkdir "$dir/direct" && cp "$results"/*.ktap "$dir/direct/" &&
	cp "$build/arch/arm64/boot/Image.gz" "$dir/Image.gz" &&
	initrd=$(ramdisk "$build" "$dir") && repo=$(testdefs "$dir") || {
		verdict 1 "$tag: ramdisk and test definition repository"
		return
	}
	$PY "$PERF_AUX_ROOT/lava-jobs/generate.py" --out "$dir" \
		--set "jobs.qemu-arm64-$pages.kernel=file://$dir/Image.gz" \
		--set "jobs.qemu-arm64-$pages.ramdisk=file://$initrd" \
		--set "testdefs.repository=file://$repo" \
		--set testdefs.revision=main \
		"qemu-arm64-$pages" > /dev/null &&
	$HELPER device "$dir/qemu-arm64-$pages.yaml" \
		"$LAVA_CACHE/lava-server/usr/share/lava-server/device-types" \
		"$dir/device.yaml" || {
		verdict 1 "$tag: job and device dictionary"
		return
	}
	start=$(date +%s)
	# libguestfs builds the overlay disk in a small VM: with no kernel in
	# /boot (a container), give it Debian's, and TCG (no nested KVM).
	SUPERMIN_KERNEL=$(ls "$LAVA_CACHE"/supermin/boot/vmlinuz-*) \
	SUPERMIN_MODULES=$(ls -d "$LAVA_CACHE"/supermin/lib/modules/*) \
	LIBGUESTFS_BACKEND=direct LIBGUESTFS_BACKEND_SETTINGS=force_tcg \
	LIBGUESTFS_CACHEDIR="$LAVA_CACHE/guestfs" \
	TMPDIR="$dir" \
		timeout "$LAVA_TIMEOUT" lava-run --job-id "perf-aux-$pages" \
		--output-dir "$dir/run" --device "$dir/device.yaml" \
		"$dir/qemu-arm64-$pages.yaml" > "$dir/lava-run.out" \
		2> "$dir/lava.log" || rc=$?
	echo "# $tag: exit $rc, $(($(date +%s) - start)) s, log $dir/lava.log"
	helper compare "$dir/direct" "$dir/lava.log" --tag "$tag"
}

# The FVP job's device tree: lava-jobs/fvp/perf-aux-trbe.dtso applied to
# the tree's own fvp-base-revc.dts gives one ETE node per CPU, the TRBE
# node and the SPE node.  (The kernel build's dtc and cpp only: no make.)
check_fvp_dt()
{
	local tree=$BUILD_4K/.. dtc=$BUILD_4K/scripts/dtc tmp rc=0 got cpus

	tmp=$(mktemp -d)
	cpp -nostdinc -I "$tree/include" -I "$tree/arch/arm64/boot/dts" \
		-I "$tree/scripts/dtc/include-prefixes" -undef -D__DTS__ \
		-x assembler-with-cpp "$tree/arch/arm64/boot/dts/arm/fvp-base-revc.dts" \
		-o "$tmp/base.dts" 2> "$tmp/err" &&
	"$dtc/dtc" -@ -q -I dts -O dtb -o "$tmp/base.dtb" "$tmp/base.dts" &&
	"$dtc/dtc" -@ -q -I dts -O dtb -o "$tmp/trbe.dtbo" \
		"$PERF_AUX_ROOT/lava-jobs/fvp/perf-aux-trbe.dtso" &&
	"$dtc/fdtoverlay" -i "$tmp/base.dtb" -o "$tmp/out.dtb" "$tmp/trbe.dtbo" &&
	"$dtc/dtc" -q -I dtb -O dts -o "$tmp/out.dts" "$tmp/out.dtb" 2>> "$tmp/err" || rc=1
	if [ $rc -eq 0 ]; then
		cpus=$(grep -cE '^		([a-z0-9_]+: )?cpu@' "$tmp/out.dts")
		got="$(grep -c '"arm,embedded-trace-extension"' "$tmp/out.dts") ETE,"
		got="$got $(grep -c '"arm,trace-buffer-extension"' "$tmp/out.dts") TRBE,"
		got="$got $(grep -c '"arm,statistical-profiling-extension-v1"' "$tmp/out.dts") SPE"
		[ "$got" = "$cpus ETE, 1 TRBE, 1 SPE" ] || rc=1
	fi
	verdict $rc "fvp-base-revc.dts + lava-jobs/fvp/perf-aux-trbe.dtso: ${got:-no tree} for ${cpus:-?} CPUs"
	[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | head -5
	rm -rf "$tmp"
}

# Each job's URLs (lab.example.yaml): the board jobs and the 16K job are
# checked with lava-run --validate, with stand-in files for them.
VALIDATE="qemu-arm64-16k:kernel,ramdisk
fvp-revc-spe-trbe:bl1,fip,kernel,dtb,ramdisk
n1sdp-spe:firmware,kernel,ramdisk
ava-spe:kselftest_url"

# lava-run --validate builds the dispatcher's whole pipeline for a job on a
# device of the type it names (the packaged template, a stand-in device),
# which the schema alone does not: device methods, connections, namespaces.
validate_jobs()
{
	local dir=$WORK/validate line job key repo rc
	local -a sets

	rm -rf "$dir"
	mkdir -p "$dir/files"
	repo=$(testdefs "$dir") || {
		verdict 1 "lava-run --validate: test definition repository"
		return
	}
	while read -r line; do
		job=${line%%:*}
		sets=(--set "testdefs.repository=file://$repo")
		for key in $(echo "${line#*:}" | tr , ' '); do
			echo stand-in > "$dir/files/$job.$key"
			sets+=(--set "jobs.$job.$key=file://$dir/files/$job.$key")
		done
		rc=0
		$PY "$PERF_AUX_ROOT/lava-jobs/generate.py" --out "$dir" "${sets[@]}" \
			"$job" > /dev/null &&
		$HELPER device "$dir/$job.yaml" \
			"$LAVA_CACHE/lava-server/usr/share/lava-server/device-types" \
			"$dir/$job.device.yaml" &&
		timeout 300 lava-run --validate --job-id "validate-$job" \
			--output-dir "$dir/$job.out" --device "$dir/$job.device.yaml" \
			"$dir/$job.yaml" > "$dir/$job.log" 2>&1 || rc=1
		verdict $rc "lava-run --validate accepts $job on a $(sed -n 's/^device_type: "\(.*\)"/\1/p' "$dir/$job.yaml") device"
		[ $rc -eq 0 ] || grep -E '"lvl": "(error|results)"' "$dir/$job.log" |
			sed 's/^/# /' | tail -3
		# (--validate leaves its work directory behind)
		rm -rf "/var/lib/lava/dispatcher/tmp/validate-$job"
	done <<< "$VALIDATE"
}

main()
{
	local pages

	mkdir -p "$LAVA_CACHE/guestfs" "$WORK"
	"$PERF_AUX_ROOT/scripts/deps.sh" lava > "$WORK/deps.log" 2>&1 ||
		verdict 1 "scripts/deps.sh lava (see $WORK/deps.log)"
	check_generated
	helper validate "$PERF_AUX_ROOT"/lava-jobs/jobs/*.yaml \
		"$PERF_AUX_ROOT/lava-jobs/perf-aux.yaml"
	helper reject
	validate_jobs
	check_fvp_dt
	if [ -n "$SCHEMA_ONLY" ]; then
		:
	elif [ $# -eq 0 ]; then
		lava_run 4k "$BUILD_4K" "$RESULTS_4K"
		# The 16K job runs as soon as that kernel can mount the overlay.
		lava_run 16k "$BUILD_16K" "$RESULTS_16K"
	else
		# A given build: its page size from its name (.build-arm64-16k...).
		pages=$(basename "$BUILD_4K" | sed -n 's/^\.build-arm64-\([0-9]*k\).*/\1/p')
		lava_run "${pages:-4k}" "$BUILD_4K" "$RESULTS_4K"
	fi
	return $bad
}

main "$@"
