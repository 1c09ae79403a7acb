#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run each test program, kselftest style: TAP 13 on stdout, each test's own
# output indented as TAP comments, one "ok"/"not ok" line per program, and a
# closing "N passed, N failed, N skipped" line. Exit 0 only if none failed.
#
# Exit codes of a test: 0 pass, 4 skip (ksft), anything else fail; a test
# that runs past the timeout in ./settings fails.

set -u
here=$(dirname "$(readlink -f "$0")")
timeout=$(sed -n 's/^timeout=//p' "$here/settings" 2>/dev/null)
timeout=${timeout:-600}
[ "${KSFT_MACHINE_SLOW:-}" = yes ] && timeout=$((timeout * 4))

pass=0 fail=0 skip=0 n=0
echo "TAP version 13"
echo "1..$#"
for t in "$@"; do
	n=$((n + 1))
	name=$(basename "$t")
	echo "# selftests: qosctl: $name"
	start=$(date +%s)
	timeout --foreground -k 10 "$timeout" "$t" 2>&1 | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	secs=$(( $(date +%s) - start ))
	case $rc in
	0)	echo "ok $n selftests: qosctl: $name (${secs}s)"; pass=$((pass + 1)) ;;
	4)	echo "ok $n selftests: qosctl: $name # SKIP"; skip=$((skip + 1)) ;;
	124)	echo "not ok $n selftests: qosctl: $name # TIMEOUT ${timeout}s"; fail=$((fail + 1)) ;;
	*)	echo "not ok $n selftests: qosctl: $name # exit=$rc"; fail=$((fail + 1)) ;;
	esac
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
