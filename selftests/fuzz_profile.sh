#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The profile parser under libFuzzer for a bounded time (FUZZ_SECONDS, 30
# by default; `make fuzz FUZZ_SECONDS=N` for long runs by hand), seeded
# from tc-profiles/. Any crash, ASan/UBSan report, leak or 10 s hang
# fails; the input that caused it is kept under $TEST_OUTPUT.
#
# FUZZ_DIR holds the fuzzer binaries (fuzz/*.c), built by the top-level
# Makefile when clang's fuzzer runtime is installed.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

fuzz_profile()
{
	fuzz_run fuzz_profile "profile parser" "$(dirname "$(readlink -f "$0")")/../tc-profiles" ||
		exit $ksft_skip
}

ALL_TESTS="fuzz_profile"
tests_run
exit $EXIT_STATUS
