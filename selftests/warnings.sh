#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Warnings about what is valid but likely not meant: tc's bytes-per-second
# units, rates below 8kbit, PRIO classes whose rate the classes before them
# do not leave. Each is one line naming the value as resolved (FILE:LINE:
# KEY for a profile, the argument for the command line), compared whole;
# --strict makes them errors for validate, apply and apply --dry-run, and
# a refused apply changes nothing.
#
#   $NS: veth $DEV (up) <- apply / --dry-run / --strict

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd tc

dir=$(mktemp -d)
defer rm -rf "$dir"

cat >"$dir/units" <<'EOT'
[profile]
default = be

[class be]
id = 3
priority = 1
rate = 0.005%

[class pip]
id = 2
dscp = ef
priority = 0
rate = 2mbps
ceil = 2mbps
police-rate = 4kbit
EOT

cat >"$dir/prio" <<'EOT'
[profile]
scheduler = prio
default = be

[class pip]
id = 2
dscp = ef
priority = 0
rate = 10%
ceil = 30%

[class be]
id = 3
priority = 1
rate = 79%

[class lbe]
id = 4
dscp = 8
priority = 2
rate = 1%
EOT

cat >"$dir/quiet" <<'EOT'
[profile]
default = be

[class be]
id = 3
rate = 100%
EOT

# expect NAME WANT CMD...: CMD's standard error is WANT, whole.
expect()
{
	local name=$1 want=$2 got

	shift 2
	got=$("$@" 2>&1 >/dev/null)
	[ "$got" = "$want" ]
	check_err $? "got:
$got
want:
$want"
	log_test "$name"
}

U="$dir/units"
W_UNITS="qosctl: warning: $U:7: rate: '0.005%' is 5kbit at link rate 100mbit, below 8kbit: a full frame takes over 1.5 s
qosctl: warning: $U:15: police-rate: '4kbit' is 4kbit, below 8kbit: a full frame takes over 1.5 s
qosctl: warning: $U:13: rate: '2mbps' is 16mbit: 'bps' is bytes per second, as in tc
qosctl: warning: $U:14: ceil: '2mbps' is 16mbit: 'bps' is bytes per second, as in tc"

# Units that read as something else, and rates below a frame per 1.5 s.
validate_units()
{
	expect "validate: bps units, a policer and a share below 8kbit, file:line:key" \
		"$W_UNITS" "$QOSCTL" validate "$U" rate 100mbit
	"$QOSCTL" validate "$U" rate 100mbit >/dev/null 2>&1
	check_err $? "warnings failed validate without --strict"
	log_test "validate: warnings alone pass"

	expect "validate --strict: the same lines, then an error" \
		"$W_UNITS
qosctl: validate: 4 warnings, errors with --strict" "$QOSCTL" validate "$U" rate 100mbit --strict
	"$QOSCTL" validate "$U" rate 100mbit --strict >/dev/null 2>&1
	check_err $(($? != 1)) "validate --strict did not exit 1"
	log_test "validate --strict exits 1"
}

validate_link_rate()
{
	expect "validate: the link rate in bytes per second, as resolved" \
		"qosctl: warning: validate: rate '100mbps' is 800mbit: 'bps' is bytes per second, as in tc" \
		"$QOSCTL" validate "$dir/quiet" rate 100mbps
	expect "validate: a link rate below 8kbit, and the class at 100% of it" \
		"qosctl: warning: validate: rate '6kbit' is 6kbit, below 8kbit: a full frame takes over 1.5 s
qosctl: warning: $dir/quiet:6: rate: '100%' is 6kbit at link rate 6kbit, below 8kbit: a full frame takes over 1.5 s" \
		"$QOSCTL" validate "$dir/quiet" rate 6kbit
	expect "validate: 8kbit and bit units are not warned about" "" \
		"$QOSCTL" validate "$dir/quiet" rate 8kbit --strict
}

validate_prio()
{
	P="$dir/prio"
	expect "validate: PRIO classes whose rate the classes before them do not leave" \
		"qosctl: warning: $P:15: rate: [class be] guaranteed 79mbit, but the classes served before it (pip) may take 30mbit of 100mbit, leaving 70mbit
qosctl: warning: $P:21: rate: [class lbe] guaranteed 1mbit, but the classes served before it (pip, be) may take the whole link (100mbit)" \
		"$QOSCTL" validate "$P" rate 100mbit
	sed -i 's/^rate = 79%$/rate = 60%\nceil = 69%/' "$P"
	expect "validate: PRIO ceilings that leave every rate: no warning" "" \
		"$QOSCTL" validate "$P" rate 100mbit --strict
}

# The device of the apply tests.
setup_ns NS
DEV=$(ifname_unique w)
ip -n "$NS" link add "$DEV" type veth peer name "${DEV}p" || exit $ksft_fail
ip -n "$NS" link set "$DEV" up
defer_state "$NS"

tree() { tc -n "$NS" qdisc show dev "$DEV"; tc -n "$NS" class show dev "$DEV"; }

# apply: the same warnings; --strict refuses before anything changes.
apply_strict()
{
	local before

	before=$(tree)
	expect "apply --dry-run --strict: warnings, then an error" \
		"qosctl: warning: apply: rate '100mbps' is 800mbit: 'bps' is bytes per second, as in tc
qosctl: apply: 1 warning, errors with --strict" \
		qosctl_ns "$NS" apply "$dir/quiet" dev "$DEV" rate 100mbps --dry-run --strict
	expect "apply --strict: warnings, then an error" \
		"qosctl: warning: apply: rate '100mbps' is 800mbit: 'bps' is bytes per second, as in tc
qosctl: apply: 1 warning, errors with --strict" \
		qosctl_ns "$NS" apply "$dir/quiet" dev "$DEV" rate 100mbps --strict
	[ "$(tree)" = "$before" ] && [ -z "$(dev_files "$NS" "$DEV")" ]
	check_err $? "a refused apply changed the device: $(tree)"
	qosctl_ns "$NS" show dev "$DEV" >/dev/null 2>&1
	check_fail $? "show finds a profile after a refused apply"
	log_test "apply --strict refused: qdiscs, classes and files as before"
}

apply_summary()
{
	local got want

	expect "apply: the warning, and the profile applied at the rate as resolved" \
		"qosctl: warning: apply: rate '100mbps' is 800mbit: 'bps' is bytes per second, as in tc" \
		qosctl_ns "$NS" apply "$dir/quiet" dev "$DEV" rate 100mbps
	# apply's summary on standard output: every rate as resolved.
	got=$(qosctl_ns "$NS" apply "$dir/quiet" dev "$DEV" rate 100mbps 2>/dev/null)
	want="dev $DEV: applied quiet at 800mbit, htb: be rate 800mbit ceil 800mbit prio 1"
	[ "$got" = "$want" ]
	check_err $? "apply printed:
$got
want:
$want"
	got=$(qosctl_ns "$NS" apply pip-20pct dev "$DEV" rate 100mbit overhead 40 2>/dev/null)
	want="dev $DEV: applied pip-20pct at 100mbit overhead 40 mpu 0 linklayer ethernet, htb:\
 pip rate 20mbit ceil 20mbit prio 0; be rate 79mbit ceil 100mbit prio 1;\
 lbe rate 1mbit ceil 100mbit prio 2"
	[ "$got" = "$want" ]
	check_err $? "apply printed:
$got
want:
$want"
	log_test "apply prints what it installed, rates as resolved (800mbit; pip 20mbit of 100mbit)"
}

show_rate()
{
	qosctl_ns "$NS" apply "$dir/quiet" dev "$DEV" rate 100mbps >/dev/null 2>&1
	qosctl_ns "$NS" show dev "$DEV" | grep -q "^dev $DEV profile quiet rate 800mbit "
	check_err $? "show does not say rate 800mbit: $(qosctl_ns "$NS" show dev "$DEV" | head -1)"
	[ "$(qosctl_ns "$NS" show dev "$DEV" -j | jq .rate_bps)" = 800000000 ]
	check_err $? "show -j rate_bps is not 800000000"
	log_test "show prints the rate as resolved (800mbit)"
	qosctl_ns "$NS" remove dev "$DEV"
}

ALL_TESTS="validate_units validate_link_rate validate_prio apply_strict apply_summary show_rate"
tests_run
exit $EXIT_STATUS
