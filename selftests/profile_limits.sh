#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Limits on what a profile may ask for, checked by `qosctl validate`: the
# rule table has a ceiling, and a section or a key said twice is an error
# naming both lines, where libinih would merge or overwrite in silence.
# Every message is compared whole. No kernel state is touched.

source "$(dirname "$0")/lib.sh"

tmp_setup
dir=$TMP

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

# The rule table has a ceiling and a floor.
rule_table()
{
	expect_error "a rule table one above the ceiling" \
		"3: rules: $((RULES_MAX + 1)) is above the ceiling of $RULES_MAX (each entry costs 16 bytes of hit counters per CPU)" \
		< <(with_rules $((RULES_MAX + 1)))
	expect_error "the rule table the old ceiling allowed" \
		"3: rules: 16777216 is above the ceiling of $RULES_MAX (each entry costs 16 bytes of hit counters per CPU)" \
		< <(with_rules 16777216)
	expect_error "a rule table below 16 entries" \
		"3: rules: '15' is not a rule table size (16-$RULES_MAX)" < <(with_rules 15)
	expect_ok "a rule table at the ceiling" < <(with_rules $RULES_MAX)
}

memory_estimate()
{
	# The estimate of what an apply takes: the rule table's share is 224 bytes
	# per entry for the hashes when full (16-byte buckets in each family's
	# table, a 192-byte element), and for the hit counters 16 bytes per id
	# per possible CPU (an array laid out [cpu][id]).
	with_rules $RULES_MAX >"$dir/ceiling"
	# Possible CPUs, as libbpf counts them: "0-3,8-11".
	cpus=$(awk -F, '{ for (i = 1; i <= NF; i++) { split($i, r, "-"); n += r[2] == "" ? 1 : r[2] - r[1] + 1 } }
		END { print n }' /sys/devices/system/cpu/possible)
	out=$("$QOSCTL" validate "$dir/ceiling" 2>&1)
	check_err $? "$out"
	want="kernel memory: [0-9]+\.[0-9] MiB per interface on $cpus CPUs \(rule table of $RULES_MAX: "
	want+="hash 448\.0 MiB full, counters $((32 * cpus))\.0 MiB, "
	want+="policers [0-9]+\.[0-9] MiB if each rule has one; other maps [0-9]+\.[0-9] MiB\)"
	[[ "$(sed -n 2p <<<"$out")" =~ ^$want$ ]]
	check_err $? "got: '$out'; want a second line matching '$want'"
	log_test "prints the kernel memory a table at the ceiling takes"
}

repeated_sections()
{
	# A repeated section: libinih hands the handler keys with their section's
	# name, so the second [class be] silently changed the first.
	expect_error "a repeated class section" "12: [class be]: repeated; first at line 8" \
		< <(base; printf '\n[class be]\nceil = 90%%\n')
	expect_error "a class section repeated right after itself" \
		"11: [class be]: repeated; first at line 8" < <(base; printf '[class be]\nceil = 90%%\n')
	expect_error "a repeated section whose first has no key" \
		"12: [class lbe]: repeated; first at line 11" \
		< <(base; printf '[class lbe]\n[class lbe]\nid = 4\nrate = 1%%\n')
	expect_error "a repeated [profile]" "11: [profile]: repeated; first at line 1" \
		< <(base; printf '[profile]\ndescription = two\n')
	expect_error "a repeated rule section" "17: [rule a]: repeated; first at line 11" \
		< <(base; printf '[rule a]\nsrc = 10.0.0.0/8\nclass = be\n[rule b]\nsrc = 10.1.0.0/16\n'
		    printf 'class = pip\n[rule a]\nsrc = 10.2.0.0/16\nclass = be\n')
	expect_error "a rule section repeated right after itself" \
		"14: [rule a]: repeated; first at line 11" \
		< <(base; printf '[rule a]\nsrc = 10.0.0.0/8\nclass = be\n[rule a]\ndst = 10.1.0.0/16\n')
}

repeated_keys()
{
	# A repeated key: the second silently replaced the first (or, for dscp,
	# added to it). A value continued on an indented line is one key, and only
	# DSCP lists add their lines up.
	expect_error "a repeated key in a class" "11: rate: repeated in [class be]; first at line 10" \
		< <(base; echo "rate = 80%")
	expect_error "a repeated key in [profile]" "3: default: repeated in [profile]; first at line 2" \
		< <(base | sed 's/^default = be$/default = be\ndefault = pip/')
	expect_error "a repeated dscp" "7: dscp: repeated in [class pip]; first at line 6" \
		< <(base | sed 's/^id = 2$/id = 2\ndscp = ef\ndscp = cs5/')
	expect_error "a repeated key in a rule" "13: src: repeated in [rule a]; first at line 12" \
		< <(base; printf '[rule a]\nsrc = 10.0.0.0/8\nsrc = 10.1.0.0/16\nclass = be\n')
	expect_ok "a DSCP list continued on an indented line" \
		< <(base | sed 's/^id = 2$/id = 2\ndscp = ef,\n    cs5/')
	expect_error "a DSCP of a continued list in another class" \
		"12: dscp4: DSCP 40 of class be is already in another class" \
		< <(base | sed 's/^id = 2$/id = 2\ndscp = ef,\n    cs5/; s/^id = 3$/id = 3\ndscp = cs5/')
	expect_error "a single value continued on an indented line" \
		"7: rate: continues the value of line 6; only a DSCP list goes on over lines" \
		< <(base | sed 's/^rate = 20%$/rate = 20%\n\t30%/')
}
ALL_TESTS="rule_table memory_estimate repeated_sections repeated_keys"
tests_run
exit $EXIT_STATUS
