#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Limits on what a profile may ask for, checked by `qosctl validate`: the
# rule table has a ceiling, and a section or a key said twice is an error
# naming both lines, where libinih would merge or overwrite in silence.
# Every message is compared whole. No kernel state is touched.

source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d)
defer rm -rf "$dir"

RULES_MAX=2097152

# The profile every case starts from (lines 1-10), changed by each case.
base()
{
	cat <<-'EOT'
	[profile]
	default = be

	[class pip]
	id = 2
	rate = 20%

	[class be]
	id = 3
	rate = 79%
	EOT
}

n=0
# expect_error NAME WANT: the profile on stdin is refused with exit status
# 1 and exactly "qosctl: validate: FILE:WANT".
expect_error()
{
	local name=$1 want=$2 f out rc

	n=$((n + 1))
	f="$dir/case$n"
	cat >"$f"
	out=$("$QOSCTL" validate "$f" 2>&1)
	rc=$?
	[ $rc -eq 1 ]
	check_err $? "exit status $rc, want 1"
	[ "$out" = "qosctl: validate: $f:$want" ]
	check_err $? "got: '$out'; want: 'qosctl: validate: $f:$want'"
	log_test "refuses $name"
}

# expect_ok NAME: the profile on stdin validates.
expect_ok()
{
	local name=$1 f out

	n=$((n + 1))
	f="$dir/case$n"
	cat >"$f"
	out=$("$QOSCTL" validate "$f" 2>&1)
	check_err $? "$out"
	log_test "accepts $name"
}

# Each case reads its profile from a process substitution, not a pipe: a
# function at the end of a pipe runs in a subshell, and its verdict would
# be lost.
with_rules()
{
	base | sed "s/^default = be\$/default = be\nrules = $1/"
}

expect_error "a rule table one above the ceiling" \
	"3: rules: $((RULES_MAX + 1)) is above the ceiling of $RULES_MAX (each entry costs 16 bytes of hit counters per CPU)" \
	< <(with_rules $((RULES_MAX + 1)))
expect_error "the rule table the old ceiling allowed" \
	"3: rules: 16777216 is above the ceiling of $RULES_MAX (each entry costs 16 bytes of hit counters per CPU)" \
	< <(with_rules 16777216)
expect_error "a rule table below 16 entries" \
	"3: rules: '15' is not a rule table size (16-$RULES_MAX)" < <(with_rules 15)
expect_ok "a rule table at the ceiling" < <(with_rules $RULES_MAX)

exit $EXIT_STATUS
