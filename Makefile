# SPDX-License-Identifier: GPL-2.0
#
# make run    the main job: build, boot and test one KERNEL on one TARGET
# make check  the project's own tests (what CI runs)
# make mutants  the kernel and test-module mutants alone, with the peers,
#              and the kill matrix
# make repeat [ROUNDS=5]  the suite ROUNDS times on one boot and on fresh
#              boots; lists flaky cases
#
# TARGET=arm64-4k|arm64-16k|arm64-64k|x86_64  KERNEL=reference|stock
# KERNEL_SRC=/path/to/linux  KERNEL_ARGS="extra boot parameters"

TARGET ?= arm64-4k
KERNEL ?= reference
KERNEL_SRC ?=
KERNEL_ARGS ?=
ROUNDS ?= 5
export TARGET KERNEL KERNEL_SRC KERNEL_ARGS

run:
	scripts/run.sh

check:
	scripts/check.sh

mutants:
	scripts/check.sh peers aux_mutants vmap_mutants module_mutants

repeat:
	scripts/repeat.sh $(ROUNDS)

clean:
	rm -rf out

.PHONY: run check mutants repeat clean
