#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The parsers of input qosctl does not write itself, beside the profile
# (fuzz_profile.sh), each under libFuzzer with ASan and UBSan for
# FUZZ_SECONDS (30 by default):
#  - fuzz_stamp: STAMP test packets and replies, as anyone on the network
#    can send them to the reflector and the sender;
#  - fuzz_record: the transaction record in /run/qosctl;
#  - fuzz_reserve: the reservation file of `reserve apply`.
# Each starts from seeds it writes itself (fuzz/seeds.h). Any crash,
# sanitizer report, leak or 10 s hang fails; the input that caused it is
# kept under $TEST_OUTPUT. Skipped without clang's fuzzer runtime.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

fuzz_stamp()
{
	fuzz_run fuzz_stamp "STAMP packet parser" || exit $ksft_skip
}

fuzz_record()
{
	fuzz_run fuzz_record "transaction record decoder" || exit $ksft_skip
}

fuzz_reserve()
{
	fuzz_run fuzz_reserve "reservation file parser" || exit $ksft_skip
}

fuzz_domain()
{
	fuzz_run fuzz_domain "domain file parser" || exit $ksft_skip
}

ALL_TESTS="fuzz_stamp fuzz_record fuzz_reserve fuzz_domain"
tests_run
exit $EXIT_STATUS
