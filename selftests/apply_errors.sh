#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# qosctl apply refuses bad input with one line on stderr and leaves the
# interface exactly as it found it: same qdiscs, classes, filters, files
# in /run/qosctl, and (once a profile is applied) the same `qosctl show -j`.
#
#   ns
#   $D1 ---- ${D1}p     clean veth: broken profiles, bad arguments
#   $D2 ---- ${D2}p     root "htb 5:" installed by someone else
#   $D3 ---- ${D3}p     pip-20pct applied, then failing re-applies
#
# Nothing is sent: IPv6 is off in the namespace so that no MLD report
# moves a counter while the state is compared.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

VERBOSE=${VERBOSE:-}	# non-empty: print every error message checked

# /run/qosctl is shared with every other qosctl user on the machine
# (tests run side by side): only the files of this test's namespace.
files()
{
	echo "files: $(state_files "$NS" | tr '\n' ' ')"
}

# snapshot DEV: everything apply may touch on DEV. direct_packets_stat is
# a packet counter of HTB's direct queue, not configuration. Classes in
# text: iproute2 6.1 prints HTB classes as text even with -j.
snapshot()
{
	local d

	echo "qdisc: $(tc -n "$NS" -j qdisc show dev "$1" |
		       jq -S -c 'map(del(.options.direct_packets_stat?))')"
	echo "class: $(tc -n "$NS" class show dev "$1" | tr '\n' ' ')"
	for d in ingress egress; do
		echo "$d: $(tc -n "$NS" -j filter show dev "$1" $d 2>&1)"
	done
	echo "show: $(qosctl_ns "$NS" show dev "$1" -j 2>&1)"
	files
}

# changed BEFORE AFTER: the snapshot lines that differ, after the change.
changed()
{
	diff <(echo "$1") <(echo "$2") | sed -n 's/^> //p' | cut -c1-160 |
		sed '2,$s/^/\t\t/'
}

# apply_fails NAME DEV MUST_CONTAIN... -- ARGS...: `qosctl apply ARGS`
# must fail with one line on stderr, starting "qosctl: " and containing
# every MUST_CONTAIN string, and leave DEV as it was.
apply_fails()
{
	local name=$1 dev=$2 before after err rc s
	local -a must=()

	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		must+=("$1")
		shift
	done
	shift

	RET=0
	before=$(snapshot "$dev")
	err=$(qosctl_ns "$NS" apply "$@" 2>&1 >/dev/null)
	rc=$?
	# Warnings (warnings.sh) may come first; the error is one line.
	err=$(grep -v '^qosctl: warning: ' <<<"$err")
	after=$(snapshot "$dev")

	check_fail $rc "apply $* succeeded"
	[ -n "$err" ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]
	check_err $? "stderr is not one line: '$err'"
	[ "${err#qosctl: }" != "$err" ]
	check_err $? "stderr does not start with 'qosctl: ': '$err'"
	for s in "${must[@]}"; do
		[[ "$err" == *"$s"* ]]
		check_err $? "stderr does not name '$s': '$err'"
	done
	[ "$before" = "$after" ]
	check_err $? "dev $dev changed: $(changed "$before" "$after")"
	rc=$RET
	log_test "$name"
	if [ $rc -ne 0 ] || [ -n "$VERBOSE" ]; then
		[ -z "$err" ] || printf "\tstderr: %s\n" "$err"
	fi
}

# line_of FILE ERE: number of the first line matching ERE.
line_of()
{
	grep -n -m1 -E "$2" "$1" | cut -d: -f1
}

require_root
require_cmd jq tc nsenter setpriv
require_qosctl
require_qdisc htb
tmp_setup

RET=0
setup_ns NS
check_err $? "namespace setup failed"
in_ns "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
D1=$(ifname_unique ae1) D2=$(ifname_unique ae2) D3=$(ifname_unique ae3)
NODEV=$(ifname_unique nodev)
defer_state "$NS"
for d in "$D1" "$D2" "$D3"; do
	ip -n "$NS" link add "$d" type veth peer name "${d}p" &&
		ip -n "$NS" link set "$d" up && ip -n "$NS" link set "${d}p" up
	check_err $? "veth $d setup failed"
done
tc -n "$NS" qdisc add dev "$D2" root handle 5: htb
check_err $? "foreign root qdisc on $D2"
log_setup "setup: three veths, a foreign root qdisc on one"

# A broken profile, also re-applied over a working one (reapply).
{
	profile_section profile default=be
	echo
	profile_section "class be" id=3 rate=50% colour=blue
} >"$TMP/unknown-key"

broken_profiles()
{
	# Broken profiles: the message names the file, the line and the key.
	P=$TMP/unknown-key
	apply_fails "broken profile: unknown key" "$D1" \
		"$P:$(line_of "$P" '^colour'): colour:" -- "$P" dev "$D1" rate 100mbit

	P=$TMP/dscp-64
	{
		profile_section profile default=be
		echo
		profile_section "class be" id=3 rate=50%
		echo
		profile_section "class lbe" id=4 rate=1% "dscp=8, 64"
	} >"$P"
	apply_fails "broken profile: DSCP 64" "$D1" \
		"$P:$(line_of "$P" '^dscp'): dscp:" "'64'" -- "$P" dev "$D1" rate 100mbit

	# A missing key has no line of its own: any line of the class's section
	# (header to last key) is an honest answer, the key and class must be named.
	P=$TMP/no-id
	{
		profile_section profile default=be
		echo
		profile_section "class be" id=3 rate=50%
		echo
		profile_section "class lbe" rate=1% dscp=8
	} >"$P"
	first=$(line_of "$P" '^\[class lbe\]')
	last=$(wc -l <"$P")
	RET=0
	err=$(qosctl_ns "$NS" validate "$P" 2>&1)
	line=$(sed -n "s|^qosctl: validate: $P:\([0-9]*\): id: .*|\1|p" <<<"$err")
	[ -n "$line" ] && [ "$line" -ge "$first" ] && [ "$line" -le "$last" ] &&
		[[ "$err" == *"[class lbe]"* ]]
	check_err $? "expected '$P:<$first-$last>: id: ... [class lbe] ...', got '$err'"
	log_test "broken profile: class without id names file, line in its section, key"
	apply_fails "broken profile: class without id" "$D1" "$P:" ": id:" "lbe" -- \
		"$P" dev "$D1" rate 100mbit
}

bad_arguments()
{
	apply_fails "unknown device" "$D1" "$NODEV" -- pip-20pct dev "$NODEV" rate 100mbit
	apply_fails "missing rate" "$D1" "rate" -- pip-20pct dev "$D1"
	apply_fails "rate that is not a rate" "$D1" "fast" -- pip-20pct dev "$D1" rate fast
	apply_fails "unknown profile" "$D1" "no-such-profile" -- \
		no-such-profile dev "$D1" rate 100mbit
}

# Refused by the kernel rather than missing from it: root without CAP_BPF
# and CAP_SYS_ADMIN (a container), or without CAP_SYS_ADMIN alone (no
# scratch namespace for the qdisc probe), is told so, not that the kernel
# lacks BPF or HTB.
nocap()
{
	cat >"$TMP/qosctl-no-$1" <<-EOF
	#!/bin/sh
	exec setpriv --bounding-set=$2 --inh-caps=$2 -- "$QOSCTL" "\$@"
	EOF
	chmod +x "$TMP/qosctl-no-$1"
	echo "$TMP/qosctl-no-$1"
}

no_capabilities()
{
	QOSCTL=$(nocap bpf -bpf,-sys_admin) apply_fails "without CAP_BPF: a permission error" "$D1" \
		"cannot load a BPF program: Operation not permitted" -- pip-20pct dev "$D1" rate 100mbit
	QOSCTL=$(nocap admin -sys_admin) apply_fails "without CAP_SYS_ADMIN: a permission error" "$D1" \
		"cannot probe the kernel's qdiscs in a scratch network namespace: Operation not permitted" -- \
		pip-20pct dev "$D1" rate 100mbit
}

foreign_root()
{
	apply_fails "foreign root qdisc (htb 5:) is not replaced" "$D2" "$D2" "5:" -- \
		pip-20pct dev "$D2" rate 100mbit
}

reapply()
{
	# A profile applied, then re-applies that fail: the applied state stays.
	RET=0
	err=$(qosctl_ns "$NS" apply pip-20pct dev "$D3" rate 100mbit 2>&1 >/dev/null)
	check_err $? "apply failed: $err"
	[ -z "$err" ]
	check_err $? "apply wrote to standard error: $err"
	qosctl_ns "$NS" show dev "$D3" -j | jq -e '.profile == "pip-20pct"' >/dev/null
	check_err $? "qosctl show does not report pip-20pct"
	log_test "apply pip-20pct on a clean veth"
	[ $EXIT_STATUS -eq 0 ] || return

	apply_fails "re-apply of a broken profile keeps the applied state" "$D3" \
		"$TMP/unknown-key:" "colour" -- "$TMP/unknown-key" dev "$D3" rate 100mbit
	apply_fails "re-apply of a missing profile path keeps the applied state" "$D3" \
		"$TMP/missing" -- "$TMP/missing" dev "$D3" rate 100mbit
	apply_fails "re-apply with rate too low for the classes keeps the applied state" "$D3" \
		"rate" -- pip-20pct dev "$D3" rate 10bit

	# The root handle 16: would also be the leaf qdisc handle of class id 6
	# (leaves are 1N: for class id N): refused before anything changes. The
	# rollback of a tree that fails half-built is exercised by the fault tests.
	P=$TMP/handle-clash
	{
		profile_section profile default=be handle=0x16
		echo
		profile_pip leaf=pfifo
		echo
		profile_section "class be" id=3 rate=70%
		echo
		profile_section "class lbe" id=6 dscp=8 priority=2 rate=10%
	} >"$P"
	apply_fails "re-apply with a root handle taken by a leaf keeps the applied state" "$D3" \
		"handle-clash:3: handle" -- "$P" dev "$D3" rate 100mbit

	RET=0
	qosctl_ns "$NS" remove dev "$D3"
	check_err $? "qosctl remove failed"
	log_test "remove after the failed re-applies"
}

ALL_TESTS="broken_profiles bad_arguments no_capabilities foreign_root reapply"
tests_run
exit $EXIT_STATUS
