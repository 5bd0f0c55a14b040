# SPDX-License-Identifier: GPL-2.0
#
# make run    the main job: build, boot and test one KERNEL on one TARGET
# make check  the project's own tests (what CI runs; 30 min from cold)
# make check-full  the whole matrix: every base (or BASE), target, variant,
#              mutant
# STAGES="NAME..."  with make check or check-full: only the stages named
#              ($(PERF_AUX) check --help lists them), e.g.
#              make check-full STAGES="sanitize vmap_mutants"
# RESUME=1     with make check-full (or check): a stage that passed before
#              with the same inputs is not run again, its lines are
#              replayed; the others run (docs/check-full.md)
# make mutants  the kernel and test-module mutants alone, with the peers,
#              and the kill matrix (on BASE)
# make series  the suite as a patch series for BASE (default mainline), with
#              a cover letter, in out/series/<base>/
# make fixes   the fixes the series carries first and the tests that go
#              with them, each a patch of its own against the pristine
#              base, checked (checkpatch, git am alone), with a cover letter
#              to whom get_maintainer.pl names, in out/fixes/<base>/
# make expected  rewrites scripts/expected/<base>/ (the reference kernels'
#              expected results, case by case, that make check judges them
#              by) from the reference runs of BASE in out/results, and
#              prints the difference for review
# make evidence  plain text (72 columns) for a cover letter or a Tested-by
#              reply: the run of KERNEL (or KERNEL_SRC) beside the stock
#              run of BASE, TARGET, VARIANT
# make submit [LAB=URL] [RUNS="reference-7.3-arm64-4k stock-7.3-arm64-4k"]
#              the LAVA jobs of RUNS (default the run KERNEL, BASE, TARGET
#              select) submitted to the lab at LAB (default the local lab)
#              all at once through lavacli, waited for, their results
#              fetched into out/results/<run>/ as make run writes them;
#              token in LAVA_TOKEN or LAVA_TOKEN_FILE, its user in LAVA_USER;
#              exit 3: a job Incomplete or Canceled (python3 -m
#              perf_aux_lava submit)
# make lab-selftest  a local LAVA lab on 127.0.0.1 (lava-server, lava-worker,
#              PostgreSQL): started, a job needing no kernel, the fault
#              cases, the QEMU arm64-4k job and KernelCI's own kselftest
#              job run through it, stopped (python3 -m perf_aux_lava lab
#              selftest)
# make soak [DURATION=600]  soak_test alone for DURATION seconds on the
#              sanitize kernel: trace on every CPU at the highest rate, churn,
#              fault injection; bytes checked, wraps, injected failures and
#              the kernel's reports (scripts/perf_aux/run.py)
# make repeat [ROUNDS=5]  the suite ROUNDS times on one boot and on fresh
#              boots; lists flaky cases (RESUME=1: the rounds a stopped
#              repeat finished are kept)
#
# BASE=7.3|7.2|6.12  TARGET=arm64-4k|arm64-16k|arm64-64k|x86_64
# KERNEL=reference|stock  VARIANT=default|strict|...
# KERNEL_SRC=/path/to/linux  KERNEL_ARGS="extra boot parameters"
# SERIES=mbox|dir  the reference kernel is BASE + that series (git am)
#
# The targets but submit, lab-selftest (python3 -m perf_aux_lava) and clean
# run $(PERF_AUX) VERB
# (scripts/perf_aux/__main__.py, whose --help lists the verbs).

BASE ?=
TARGET ?= arm64-4k
KERNEL ?= reference
KERNEL_SRC ?=
SERIES ?=
KERNEL_ARGS ?=
ROUNDS ?= 5
DURATION ?= 600
LAB ?=
RUNS ?=
STAGES ?=
RESUME ?=
export BASE TARGET KERNEL KERNEL_SRC SERIES KERNEL_ARGS LAB DURATION RESUME

PERF_AUX = PYTHONPATH=scripts python3 -m perf_aux

run:
	$(PERF_AUX) run

check:
	$(PERF_AUX) check $(STAGES)

check-full:
	$(PERF_AUX) check-full $(STAGES)

mutants:
	BASE="$${BASE:-$$($(PERF_AUX) default-base)}" \
		$(PERF_AUX) check-full peers aux_mutants vmap_mutants \
		module_mutants perf_core_mutants

series:
	$(PERF_AUX) series

fixes:
	$(PERF_AUX) fixes

evidence:
	$(PERF_AUX) evidence

expected:
	$(PERF_AUX) results expected --write \
		out/results/reference-$${BASE:-$$($(PERF_AUX) default-base)}-*/

submit:
	PYTHONPATH=scripts python3 -m perf_aux_lava submit $(RUNS)

lab-selftest:
	PYTHONPATH=scripts python3 -m perf_aux_lava lab selftest qemu

repeat:
	$(PERF_AUX) repeat $(ROUNDS)

soak:
	$(PERF_AUX) soak

clean:
	rm -rf out

.PHONY: run check check-full mutants series fixes evidence expected submit \
	lab-selftest repeat soak clean
