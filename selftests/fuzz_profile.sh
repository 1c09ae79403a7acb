#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The profile parser under libFuzzer for a bounded time (FUZZ_SECONDS, 30
# by default; `make fuzz FUZZ_SECONDS=N` for long runs by hand), seeded
# from tc-profiles/. Any crash, ASan/UBSan report, leak or 10 s hang
# fails; the input that caused it is kept under $TEST_OUTPUT.
#
# FUZZ_PROFILE is the fuzzer binary (fuzz/fuzz_profile.c), built by the
# top-level Makefile when clang's fuzzer runtime is installed.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

here=$(dirname "$(readlink -f "$0")")
FUZZ_SECONDS=${FUZZ_SECONDS:-30}

if [ -z "${FUZZ_PROFILE:-}" ] || [ ! -x "$FUZZ_PROFILE" ]; then
	echo "SKIP: no fuzzer binary: clang's libFuzzer runtime (libclang-rt-14-dev) is missing"
	exit $ksft_skip
fi

corpus=$(mktemp -d)
defer rm -rf "$corpus"
artifacts=${TEST_OUTPUT:-$corpus}/fuzz_profile-

"$FUZZ_PROFILE" -max_total_time="$FUZZ_SECONDS" -timeout=10 -print_final_stats=1 \
	-dict="$here/../fuzz/profile.dict" -artifact_prefix="$artifacts" \
	"$corpus" "$here/../tc-profiles" >"$corpus/log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$corpus/log")
check_err $rc "$(grep -A20 -m1 'ERROR\|runtime error\|Test unit written' "$corpus/log")"
log_test "profile parser fuzzed ${FUZZ_SECONDS}s, ${runs:-?} inputs, no crash, leak or report"
exit $EXIT_STATUS
