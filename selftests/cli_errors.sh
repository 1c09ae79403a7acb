#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Wrong invocations of qosctl: each must exit non-zero, print nothing on
# stdout and exactly one line on stderr, "qosctl: <what>", and change
# nothing. They run in a namespace of their own with one veth pair, $IF
# (with nothing applied) and $IF2 (with pip-20pct applied), whose qdiscs,
# filters and qosctl's files are compared before and after the table.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq tc
require_qosctl
tmp_setup
setup_ns NS || exit $ksft_fail
IF=$(ifname_unique cli) IF2=$(ifname_unique clj)
NODEV=$(ifname_unique cln)	# never created
defer_state "$NS"
veth_pair "$NS" "$IF" "$IF2" || exit $ksft_fail
qosctl_ns "$NS" apply pip-20pct dev "$IF2" rate 100mbit || exit $ksft_fail

state()
{
	tc_snapshot "$NS" "$IF" "$IF2"
	qosctl_ns "$NS" rule list dev "$IF2"
	state_files "$NS"
}

# One invocation per line, split like shell words; $IF, $IF2, $NODEV expanded.
# Bare qosctl prints the usage on stderr: cli_help.sh.
cat >"$TMP/table" <<'EOF'
bogus
aply pip-20pct dev $IF rate 100mbit
--dryrun apply pip-20pct dev $IF rate 100mbit
-x
--bogus
--confirm
--confirm 0 apply pip-20pct dev $IF rate 100mbit
--confirm soon apply pip-20pct dev $IF rate 100mbit
--watch 0 stats dev $IF2
--count -1 --watch 1 stats dev $IF2
apply
apply pip-20pct
apply pip-20pct dev
apply pip-20pct dev $IF
apply pip-20pct dev $IF rate
apply pip-20pct dev $IF rate fast
apply pip-20pct dev $IF rate 100mbit extra
apply pip-20pct dev $IF dev
apply pip-20pct rate 100mbit
apply no-such-profile dev $IF rate 100mbit
apply pip-20pc dev $IF rate 100mbit
apply pip-20pct dev $IF rat 100mbit
apply pip-20pct dev $NODEV rate 100mbit
apply pip-20pct dev ../../x rate 100mbit
apply pip-20pct dev averyveryverylongname rate 100mbit
--dry-run --confirm 10 apply pip-20pct dev $IF rate 100mbit
apply pip-20pct dev $IF2 rate 0bit
apply pip-5pct dev $IF2 rate 100mbit extra
remove
remove dev
remove dev $IF
remove $IF2
remove dev $IF2 extra
remove dev $IF2 --dry-run
remove dev $IF2 --confirm 10
-j apply pip-5pct dev $IF2 rate 100mbit
show
show dev $IF
show dev $IF2 rate 1gbit
stats
stats dev $IF
-j --prometheus stats dev $IF2
--watch 1 --prometheus stats
stats dev $IF2 extra
stats dev $IF2 --wide --per-family
stats dev $IF2 --prometheus --wide
stats dev $IF2 -s --watch 1
stats dev $IF2 --count 2
validate
validate no-such-profile
validate pip-20pct rate
validate pip-20pct rate fast
validate pip-20pct dev $IF2
list extra
list -j extra
help bogus
help rule bogus
help apply extra
rule
rule bogus
rule add
rule add dev
rule add $IF2 class pip
rule add dev $IF class pip
rule add dev $IF2
rule add dev $IF2 class no-such-class
rule add dev $IF2 src 2001:db8::/129 class pip
rule add dev $IF2 src 10.0.0.0/8 dst 2001:db8::/32 class pip
rule add dev $IF2 flowlabel 0x100000 class pip
rule add dev $IF2 bogus 1 class pip
rule add dev $IF2 clas pip
rule ad dev $IF2 class pip
rule del dev $IF2
rule del dev $IF2 id abc
rule del dev $IF2 id 99
rule del dev $IF2 name nosuch
rule list dev $IF2 extra
rule list dev $IF
confirm
confirm dev $IF2
exporter
exporter extra
EOF

# Each line of the table fails alone.
wrong_invocations()
{
	local line rc

	while IFS= read -r line; do
		eval "set -- $line"
		qosctl_ns "$NS" "$@" >"$TMP/out" 2>"$TMP/err"
		rc=$?
		[ $rc -ne 0 ]
		check_err $? "exit 0"
		[ ! -s "$TMP/out" ]
		check_err $? "stdout: $(head -c 200 "$TMP/out")"
		[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q '^qosctl: ' "$TMP/err"
		check_err $? "stderr: $(head -c 400 "$TMP/err")"
		log_test "qosctl $(eval echo "\"$line\"") -> $(head -c 60 "$TMP/err")"
	done <"$TMP/table"
}

# The interfaces are as setup left them.
nothing_changed()
{
	[ "$BEFORE" = "$(state)" ]
	check_err $? "the interfaces changed: $(diff <(echo "$BEFORE") <(state))"
	log_test "nothing changed on $IF and $IF2"
}

ALL_TESTS="wrong_invocations nothing_changed"
BEFORE=$(state)
tests_run
exit $EXIT_STATUS
