#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Shared helpers for the network selftests, modelled on the kernel's
# tools/testing/selftests/net/lib.sh: namespaces created with a unique
# suffix and their removal registered as they are made, deferred cleanup
# run on every exit path, check_err/log_test, ksft exit codes; and on
# forwarding/lib.sh for the runner: ALL_TESTS, tests_run, TESTS="name ...",
# a defer scope per test (Documentation/testing.rst, "Writing a suite").
#
# Every qosctl call in a namespace goes through nsenter --net, the way an
# operator enters a router namespace; qosctl itself needs no bpffs.

ksft_pass=0
ksft_fail=1
ksft_xfail=2
ksft_skip=4

RET=0
EXIT_STATUS=0
QOSCTL=${QOSCTL:-$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.output/qosctl}
KSFT_MACHINE_SLOW=${KSFT_MACHINE_SLOW:-no}
# The suites that read qosctl's clsact filters with tc run on the clsact
# path even where the kernel has tcx; net_tcx.sh sets QOSCTL_ATTACH=tcx
# and checks the tcx path (Documentation/testing.rst).
export QOSCTL_ATTACH=${QOSCTL_ATTACH:-clsact}

# Cleanup stack: each entry is a command, run last-in first-out. The stack
# is cut into scopes: tests_run opens one per test, so that what a test
# defers runs when that test ends, and what the script defers (its
# topology, its temporary directory) at exit. The shape of the kernel's
# net/lib.sh defer_scope_push / defer_scope_pop; written for this lib.
__defer=()
__defer_scopes=()
defer()
{
	__defer+=("$*")
}

# defer_scope_push: later defers belong to a new scope.
defer_scope_push()
{
	__defer_scopes+=(${#__defer[@]})
}

# defer_scope_pop: run the innermost scope's defers, last first, and close
# it; with no scope open, run the script's.
defer_scope_pop()
{
	local i base=0 n=${#__defer_scopes[@]}

	if [ "$n" -gt 0 ]; then
		base=${__defer_scopes[n - 1]}
		unset "__defer_scopes[n - 1]"
	fi
	for ((i = ${#__defer[@]} - 1; i >= base; i--)); do
		eval "${__defer[i]}" >/dev/null 2>&1
		unset "__defer[i]"
	done
}

# defer_run: every scope, innermost first (the EXIT trap).
defer_run()
{
	while [ ${#__defer_scopes[@]} -gt 0 ]; do
		defer_scope_pop
	done
	defer_scope_pop
}
trap defer_run EXIT

# in_defer_scope CMD...: run CMD in a scope of its own; CMD's status.
in_defer_scope()
{
	local rc

	defer_scope_push
	"$@"
	rc=$?
	defer_scope_pop
	return $rc
}

# A suite, as in the kernel's forwarding tests: one function per test,
# their names in ALL_TESTS in the order they run, the script's setup at
# top level, then `tests_run; exit $EXIT_STATUS`. TESTS="name ..." runs
# only those tests, in that order; a name not in ALL_TESTS fails the
# suite before any test runs. Each test runs in its own defer scope, with
# RET cleared; a bare `log_test` reports under the test's name, and checks
# a test leaves unreported are reported for it when it ends.
TEST_NAME=
tests_run()
{
	local t

	for t in ${TESTS:-$ALL_TESTS}; do
		if [[ " $(echo $ALL_TESTS) " != *" $t "* ]] || ! declare -F "$t" >/dev/null; then
			echo "FAIL: unknown test '$t'; this suite has: $(echo $ALL_TESTS)"
			exit $ksft_fail
		fi
	done
	for t in ${TESTS:-$ALL_TESTS}; do
		RET=0
		retmsg=
		TEST_NAME=$t
		in_defer_scope "$t"
		[ "$RET" -ne 0 ] && log_test "$t"
		TEST_NAME=
	done
	return 0
}

require_root()
{
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: needs root"
		exit $ksft_skip
	fi
}

# require_qdisc KIND: skip the test on a kernel without qdisc KIND.
require_qdisc()
{
	if ! qdisc_available "$1"; then
		echo "SKIP: the kernel lacks $1"
		exit $ksft_skip
	fi
}

require_cmd()
{
	local c

	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1; then
			echo "SKIP: $c is not installed"
			exit $ksft_skip
		fi
	done
}

# require_qosctl: skip the suite when qosctl is not built.
require_qosctl()
{
	if [ ! -x "$QOSCTL" ]; then
		echo "SKIP: $QOSCTL is not built (make)"
		exit $ksft_skip
	fi
}

# tmp_setup: TMP, a directory removed when the scope that calls it ends
# (at top level: at exit).
tmp_setup()
{
	TMP=$(mktemp -d) || exit $ksft_fail
	defer rm -rf "$TMP"
}

# setup_ns VAR... : create one namespace per variable name, store its name
# in the variable, bring lo up, and register its deletion.
setup_ns()
{
	local var name

	for var in "$@"; do
		name="$var-$(mktemp -u XXXXXX)"
		ip netns add "$name" || return 1
		defer ip netns del "$name"
		ip -n "$name" link set lo up
		# Quiet IPv6: no DAD, no router solicitations, so exact counters
		# see only the traffic a test sends.
		in_ns "$name" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 \
			net.ipv6.conf.all.router_solicitations=0 \
			net.ipv6.conf.default.router_solicitations=0
		eval "$var=$name"
	done
}

# in_ns NS CMD...: run CMD in NS, keeping the host's /sys/fs/bpf.
in_ns()
{
	local ns=$1

	shift
	nsenter --net="/run/netns/$ns" -- "$@"
}

qosctl_ns()
{
	local ns=$1

	shift
	in_ns "$ns" "$QOSCTL" "$@"
}

# bg_ns NS VAR CMD...: start CMD in NS in the background, store its PID in
# VAR and register its kill by PID. nsenter is started directly, not through
# in_ns: a backgrounded function runs in a subshell, $! would be that
# subshell's PID, and the kill would leave CMD running. nsenter --net execs
# CMD in its own process, so $! is CMD's PID.
bg_ns()
{
	local ns=$1 var=$2 pid

	shift 2
	nsenter --net="/run/netns/$ns" -- "$@" &
	pid=$!
	defer kill "$pid"
	eval "$var=$pid"
}

# spawn_ns NS VAR CMD...: like bg_ns, for commands that end or are stopped
# during the test (probes, floods): output in $TMP/VAR.log (the caller sets
# TMP), and the kill at exit skipped once the test has reaped the PID, which
# by then may belong to another process.
declare -A SPAWNED
spawn_ns()
{
	local ns=$1 var=$2 pid

	shift 2
	nsenter --net="/run/netns/$ns" -- "$@" >"$TMP/$var.log" 2>&1 &
	pid=$!
	SPAWNED[$pid]=1
	defer stop_pid "$pid"
	eval "$var=$pid"
}

stop_pid()
{
	[ -n "${SPAWNED[$1]:-}" ] || return 0
	unset "SPAWNED[$1]"
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# reap_pid PID: wait for a spawned command to end, return its status.
reap_pid()
{
	local rc

	wait "$1"
	rc=$?
	unset "SPAWNED[$1]"
	return $rc
}

# stopped PID: wait up to 10 s (60 s under emulation) for PID to be
# stopped (state T).
stopped()
{
	local i n=100

	[ "$KSFT_MACHINE_SLOW" = yes ] && n=600
	for ((i = 0; i < n; i++)); do
		[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = T ] && return 0
		sleep 0.1
	done
	return 1
}

# ended PID: wait up to 20 s for our child PID to exit (a zombie until
# reaped), so that a hang fails the check rather than the whole test.
ended()
{
	local i st n=200

	[ "$KSFT_MACHINE_SLOW" = yes ] && n=1200
	for ((i = 0; i < n; i++)); do
		st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
		[ -z "$st" ] || [ "$st" = Z ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_listen NS PROTO PORT: wait up to 5 s for a listening socket
# (PROTO: t or u, as in ss -t / -u).
wait_listen()
{
	local i

	for ((i = 0; i < 50; i++)); do
		[ -n "$(in_ns "$1" ss -Hln"$2" "sport = :$3")" ] && return 0
		sleep 0.1
	done
	return 1
}

# Interface names are unique per test run, so that two copies of a test
# side by side never show each other's names in a failure message.
ifname_unique()
{
	echo "$1$(mktemp -u XXXX | tr 'A-Z' 'a-z')"
}

# state_files NS: qosctl's files for the devices of NS, one per line.
state_files()
{
	local c

	c=$(ns_cookie "$1") || return 1
	ls -A /run/qosctl 2>/dev/null | grep "^$c-" || true
}

# dev_files NS IF: qosctl's files for device IF of NS.
dev_files()
{
	local c i

	c=$(ns_cookie "$1") || return 1
	i=$(ip -n "$1" -j link show dev "$2" | jq '.[0].ifindex') || return 1
	ls -A /run/qosctl 2>/dev/null | grep "^$c-$i\\." || true
}

# lock_file NS IF: the path of the lock qosctl takes for IF of NS.
lock_file()
{
	echo "/run/qosctl/$(ns_cookie "$1")-$(ip -n "$1" -j link show dev "$2" | jq '.[0].ifindex').lock"
}

# ns_cookie NS: the cookie of network namespace NS (SO_NETNS_COOKIE), in
# the 16 hex digits that start the names of qosctl's files in /run/qosctl.
ns_cookie()
{
	in_ns "$1" python3 -c 'import socket, struct
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
print("%016x" % struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 71, 8))[0])'
}

# defer_state NS...: qosctl keeps a lock file and a transaction record per
# device in /run/qosctl, named "<netns cookie>-<ifindex>.*". A namespace
# deleted with a profile applied leaves its lock file, a test that stops
# early its record too: register the removal of NS's files, and only
# those (other namespaces' files belong to other tests, or to the host).
# Cookies are never reused, so the pattern cannot match a later namespace.
# Call it in the test's own shell, not in a $(...) subshell, after
# setup_ns (the cleanup needs the namespace).
defer_state()
{
	local ns c

	for ns in "$@"; do
		c=$(ns_cookie "$ns")
		[[ "$c" =~ ^[0-9a-f]{16}$ ]] || { echo "no netns cookie for $ns"; return 1; }
		defer state_cleanup "$ns" "$c"
	done
}

# state_cleanup NS COOKIE: a qosctl still running in NS (a confirm keeper,
# an apply the test was stopped in) could write its files again after they
# are removed: kill what runs in NS, by PID (every process in a setup_ns
# namespace is the test's), wait for it to go, then remove them.
state_cleanup()
{
	local i pids

	for ((i = 0; i < 50; i++)); do
		pids=$(ip netns pids "$1" 2>/dev/null)
		[ -z "$pids" ] && break
		kill -KILL $pids
		sleep 0.1
	done
	rm -f "/run/qosctl/$2-"*
}

# tc_snapshot NS DEV...: each DEV's qdiscs, classes and clsact filters as
# tc prints them with -d (no counters), to compare before and after a
# step. Qdiscs sorted: the kernel lists them in the order of its handle
# hash and of their creation, so a leaf re-created by a rollback moves in
# the list and is the same state.
tc_snapshot()
{
	local ns=$1 dev

	shift
	for dev in "$@"; do
		tc -n "$ns" -d qdisc show dev "$dev" | sort
		tc -n "$ns" -d class show dev "$dev"
		tc -n "$ns" filter show dev "$dev" ingress
		tc -n "$ns" filter show dev "$dev" egress
	done
}

# dev_clean NS DEV: DEV as qosctl found it: the kernel's default root
# qdisc and no clsact; else what is left, on stdout, and status 1.
dev_clean()
{
	local root n

	root=$(tc -n "$1" -j qdisc show dev "$2" root | jq -r '.[0].handle')
	[ "$root" = "0:" ] || { echo "dev $2: root qdisc $root, not the default"; return 1; }
	n=$(tc -n "$1" -j qdisc show dev "$2" | jq '[.[] | select(.kind == "clsact")] | length')
	[ "$n" -eq 0 ] || { echo "dev $2: clsact left behind"; return 1; }
}

# slot_prog NS DEV DIR: the ids of the programs at qosctl's clsact filter
# (handle 0x51) of DEV's DIR (ingress or egress), comma-separated; empty
# when the slot is free.
slot_prog()
{
	tc -n "$1" -j filter show dev "$2" "$3" |
		jq -r '[.[] | select(.options.handle == "0x51") | .options.prog.id] | join(",")'
}

# cfg_map NS DEV NAME: the id of map NAME of the program at qosctl's egress
# filter on DEV.
cfg_map()
{
	local m

	for m in $(bpftool prog show id "$(slot_prog "$1" "$2" egress)" -j | jq '.map_ids[]'); do
		bpftool map show id "$m" -j | jq -r --arg n "$3" 'select(.name == $n) | .id'
	done
}

# cfg_gen NS DEV: the flip generation of DEV's configuration (qos_cfg_gen:
# one more with each change the programs read; its low bit names the
# active slot).
cfg_gen()
{
	bpftool map lookup id "$(cfg_map "$1" "$2" qos_cfg_gen)" key 0 0 0 0 -j |
		jq -r '.value | map(ltrimstr("0x")) | reverse | join("") | "0x" + .' |
		xargs printf '%d\n'
}

# cfg_slot NS DEV SLOT: the bytes of DEV's configuration slot SLOT (0, 1), hex.
cfg_slot()
{
	bpftool map lookup id "$(cfg_map "$1" "$2" qos_cfg_slots)" key "$3" 0 0 0 -j |
		jq -r '.value | map(ltrimstr("0x")) | join("")'
}

# shown_progs NS DEV: "INGRESS EGRESS", the programs `qosctl show -j` names
# for DEV, "-" for no ingress program.
shown_progs()
{
	qosctl_ns "$1" show dev "$2" -j | jq -r '"\(.programs.ingress // "-") \(.programs.egress)"'
}

# tc_classes NS DEV [CLASSID]: the ids of DEV's classes, one a line; with
# CLASSID, that class's line of `tc class show` (tc 6.1 prints no JSON for
# HTB classes).
tc_classes()
{
	tc -n "$1" class show dev "$2" | awk -v c="${3:-}" '
		c == "" { print $3 }
		c != "" && $3 == c'
}

# tc_class_rates NS DEV: "CLASSID RATE CEIL" per HTB class of DEV, in
# bit/s as tc prints them (rounded down, to under 1 kbit at these rates).
tc_class_rates()
{
	tc -n "$1" class show dev "$2" | awk '
	function bits(s) {
		n = s + 0
		if (s ~ /Gbit$/) n *= 1e9; else if (s ~ /Mbit$/) n *= 1e6; else if (s ~ /Kbit$/) n *= 1e3
		return n
	}
	$1 == "class" && $2 == "htb" {
		r = c = 0
		for (i = 4; i < NF; i++) {
			if ($i == "rate") r = bits($(i + 1))
			if ($i == "ceil") c = bits($(i + 1))
		}
		printf "%s %d %d\n", $3, r, c
	}'
}

# tc_class_sent NS DEV CLASSID: the packets tc counts as sent by class
# CLASSID of DEV, -1 if there is no such class.
tc_class_sent()
{
	tc -n "$1" -s class show dev "$2" |
		awk -v c="$3" '$1 == "class" { on = $3 == c } on && $1 == "Sent" { print $4; n++ }
			END { if (!n) print -1 }'
}

# ping_summary [FILE]: "TRANSMITTED RECEIVED" from the summary line of
# `ping -q` in FILE (stdin without one); "0 0" when there is none.
ping_summary()
{
	awk '/packets transmitted/ {
		tx = $1
		for (i = 2; i <= NF; i++)
			if ($i ~ /^received/)
				rx = $(i - 1)
	}
	END { print tx + 0, rx + 0 }' "${1:--}"
}

# veth_pair NS DEV PEER: a veth pair in NS, both ends up.
veth_pair()
{
	ip -n "$1" link add "$2" type veth peer name "$3" &&
		ip -n "$1" link set "$2" up && ip -n "$1" link set "$3" up
}

# pings_answered FILE COUNT: the summary of `ping -q` in FILE says COUNT
# sent and every one answered; PING_TX and PING_RX are what it says.
pings_answered()
{
	read -r PING_TX PING_RX < <(ping_summary "$1")
	[ "$PING_TX" -eq "$2" ] && [ "$PING_RX" -eq "$PING_TX" ]
}

# topo_h1_r_h2: h1 -- r -- h2 over veth, IPv4 and IPv6 on each side,
# forwarding in r, static neighbours everywhere (no ARP/ND during a test).
#
#   h1                    r                      h2
#   $H1_IF ---------- $R_IF1   $R_IF2 ---------- $H2_IF
#   10.1.1.1/24        10.1.1.2  10.1.2.2         10.1.2.1/24
#   2001:db8:1::1/64   ::2       2001:db8:2::2    2001:db8:2::1/64
#
# Sets H1 R H2 (namespaces), H1_IF R_IF1 R_IF2 H2_IF, and the addresses
# H1_V4 H1_V6 H2_V4 H2_V6. The namespaces and qosctl's files for their
# devices are removed at exit (defer_state).
topo_h1_r_h2()
{
	setup_ns H1 R H2 || return 1
	H1_IF=$(ifname_unique h1e) R_IF1=$(ifname_unique r1e)
	R_IF2=$(ifname_unique r2e) H2_IF=$(ifname_unique h2e)
	defer_state "$H1" "$R" "$H2"
	H1_V4=10.1.1.1 H2_V4=10.1.2.1 H1_V6=2001:db8:1::1 H2_V6=2001:db8:2::1

	ip -n "$H1" link add "$H1_IF" type veth peer name "$R_IF1" netns "$R" || return 1
	# TOPO_TXQ=N: r's link to h2 with N TX and RX queues on both ends.
	ip -n "$H2" link add "$H2_IF" ${TOPO_TXQ:+numtxqueues $TOPO_TXQ numrxqueues $TOPO_TXQ} \
		type veth peer name "$R_IF2" \
		${TOPO_TXQ:+numtxqueues $TOPO_TXQ numrxqueues $TOPO_TXQ} netns "$R" || return 1

	ip -n "$H1" addr add $H1_V4/24 dev "$H1_IF"
	ip -n "$H1" addr add $H1_V6/64 dev "$H1_IF" nodad
	ip -n "$R" addr add 10.1.1.2/24 dev "$R_IF1"
	ip -n "$R" addr add 2001:db8:1::2/64 dev "$R_IF1" nodad
	ip -n "$R" addr add 10.1.2.2/24 dev "$R_IF2"
	ip -n "$R" addr add 2001:db8:2::2/64 dev "$R_IF2" nodad
	ip -n "$H2" addr add $H2_V4/24 dev "$H2_IF"
	ip -n "$H2" addr add $H2_V6/64 dev "$H2_IF" nodad
	for ns_if in "$H1 $H1_IF" "$R $R_IF1" "$R $R_IF2" "$H2 $H2_IF"; do
		set -- $ns_if
		ip -n "$1" link set "$2" up
	done
	ip -n "$H1" route add default via 10.1.1.2
	ip -n "$H1" -6 route add default via 2001:db8:1::2
	ip -n "$H2" route add default via 10.1.2.2
	ip -n "$H2" -6 route add default via 2001:db8:2::2
	in_ns "$R" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1

	neigh_static "$H1" "$H1_IF" 10.1.1.2 2001:db8:1::2 "$R" "$R_IF1"
	neigh_static "$R" "$R_IF1" $H1_V4 $H1_V6 "$H1" "$H1_IF"
	neigh_static "$R" "$R_IF2" $H2_V4 $H2_V6 "$H2" "$H2_IF"
	neigh_static "$H2" "$H2_IF" 10.1.2.2 2001:db8:2::2 "$R" "$R_IF2"
}

# topo_setup [LABEL]: topo_h1_r_h2 as a script's setup, one TEST line;
# the suite stops there without its topology.
topo_setup()
{
	RET=0
	topo_h1_r_h2
	check_err $? "topology setup failed"
	log_setup "${1:-topology h1 - r - h2}"
}

# log_setup LABEL: log_test for a step of the script's setup; the suite
# stops there if it failed (the tests after it would only fail again).
log_setup()
{
	log_test "$1"
	[ "$EXIT_STATUS" -eq 0 ] || exit $ksft_fail
}

# topo_h1_r_h2_applied PROFILE RATE: topo_h1_r_h2 with PROFILE applied at
# RATE on both of r's interfaces. Skips the test without HTB, fails it
# without the topology; an apply that fails is a check_err.
topo_h1_r_h2_applied()
{
	local dev

	require_qdisc htb
	topo_h1_r_h2 || { echo "FAIL: topology"; exit $ksft_fail; }
	for dev in "$R_IF1" "$R_IF2"; do
		qosctl_ns "$R" apply "$1" dev "$dev" rate "$2"
		check_err $? "apply on $dev"
	done
}

# profile_section NAME KEY=VALUE...: one section of a test profile,
# "[NAME]" and a "key = value" line for each argument.
profile_section()
{
	local kv

	echo "[$1]"
	shift
	for kv in "$@"; do
		echo "${kv%%=*} = ${kv#*=}"
	done
}

# profile_pip KEY=VALUE...: the pip class of the test profiles (pip-20pct's:
# id 2, DSCP 46, priority 0, 20% and no more), with KEYs added.
profile_pip()
{
	profile_section "class pip" id=2 dscp=46 priority=0 rate=20% ceil=20% "$@"
}

# fam_name 4|6: IPv4 or IPv6.
fam_name()
{
	[ "$1" = 4 ] && echo IPv4 || echo IPv6
}

# irtt_probe NS VAR DST JSON [ARGS...]: an irtt client in NS to DST at
# nice -20, every $PROBE_INTERVAL for $PROBE_DURATION, its JSON in JSON;
# started as spawn_ns VAR (reap_pid $VAR for its status).
irtt_probe()
{
	local ns=$1 var=$2 dst=$3 json=$4

	shift 4
	spawn_ns "$ns" "$var" nice -n -20 irtt client -Q -i "$PROBE_INTERVAL" \
		-d "$PROBE_DURATION" "$@" -o "$json" "$dst"
}

# rtt_summary FILE [Q]: "samples p50 pQ loss%" from irtt's JSON, RTTs in
# ms, Q 0.99 unless given; percentiles by nearest rank over the replies
# received.
rtt_summary()
{
	local s loss

	s=$(jq -r --argjson hi "${2:-0.99}" \
		'[.round_trips[] | select(.lost == "false") | .delay.rtt] | sort as $r
		 | ($r | length) as $n
		 | def q(p): if $n == 0 then -1 else $r[((p * $n) | ceil) - 1] / 1e6 end;
		 "\($n) \(q(0.5)) \(q($hi))"' "$1" 2>/dev/null) || return 1
	loss=$(jq -r '.stats.packet_loss_percent' "$1" 2>/dev/null) || return 1
	echo "$s $loss"
}

# fcmp EXPR A B: floating-point comparison in awk, e.g. fcmp "a <= b" 1 2.
fcmp()
{
	awk -v a="$2" -v b="$3" "BEGIN { exit !($1) }"
}

# neigh_static NS IF V4 V6 PEER_NS PEER_IF: permanent neighbours for V4 and
# V6 on NS's IF, with PEER_IF's MAC address.
neigh_static()
{
	local mac

	mac=$(ip -n "$5" -j link show dev "$6" | jq -r '.[0].address')
	ip -n "$1" neigh replace "$3" lladdr "$mac" dev "$2" nud permanent
	ip -n "$1" -6 neigh replace "$4" lladdr "$mac" dev "$2" nud permanent
}

# With FAIL_TO_XFAIL=yes a failing check is an expected failure (XFAIL):
# reported, but the suite still passes. See xfail_on_slow.
check_err()
{
	if [ "$RET" -eq 0 ] && [ "$1" -ne 0 ]; then
		RET=$ksft_fail
		[ "${FAIL_TO_XFAIL:-}" = yes ] && RET=$ksft_xfail
		retmsg=$2
	fi
}

check_fail()
{
	if [ "$RET" -eq 0 ] && [ "$1" -eq 0 ]; then
		RET=$ksft_fail
		[ "${FAIL_TO_XFAIL:-}" = yes ] && RET=$ksft_xfail
		retmsg=$2
	fi
}

# xfail_on_slow CMD...: run a timing check (a rate, a latency) so that on a
# slow machine (KSFT_MACHINE_SLOW=yes: a VM under software emulation) its
# failure is reported as XFAIL rather than failing the suite, as the
# kernel's net/lib.sh does. Functional checks (counters, verdicts, cleanup)
# are never wrapped.
xfail_on_slow()
{
	if [ "$KSFT_MACHINE_SLOW" = yes ]; then
		FAIL_TO_XFAIL=yes "$@"
	else
		"$@"
	fi
}

# log_test [NAME]: print one TEST line for the checks since the last call;
# NAME defaults to the running test's.
log_test()
{
	local name=${1:-$TEST_NAME}

	if [ "$RET" -eq "$ksft_xfail" ]; then
		printf "TEST: %-70s [XFAIL]\n" "$name"
		[ -n "${retmsg:-}" ] && printf "\t%s (KSFT_MACHINE_SLOW)\n" "$retmsg"
	elif [ "$RET" -ne 0 ]; then
		EXIT_STATUS=1
		printf "TEST: %-70s [FAIL]\n" "$name"
		[ -n "${retmsg:-}" ] && printf "\t%s\n" "$retmsg"
	else
		printf "TEST: %-70s [ OK ]\n" "$name"
	fi
	RET=0
	retmsg=
}

log_test_skip()
{
	printf "TEST: %-70s [SKIP]\n" "${1:-$TEST_NAME}"
	[ -n "${2:-}" ] && printf "\t%s\n" "$2"
}

# hook_obj: HOOK, a tc program that is not qosctl's: bench/hook_ref.bpf.c,
# built by `make bench` into the output directory, or compiled into $TMP.
hook_obj()
{
	local src obj

	obj=${HOOK_OBJ:-$(dirname "$QOSCTL")/bench/hook_ref.bpf.o}
	if [ -f "$obj" ]; then
		HOOK=$obj
		return 0
	fi
	src=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bench/hook_ref.bpf.c
	command -v clang >/dev/null || return 1
	HOOK=$TMP/hook_ref.bpf.o
	clang -g -O2 -target bpf -I"/usr/include/$(gcc -print-multiarch 2>/dev/null)" \
		-c "$src" -o "$HOOK" 2>/dev/null
}

# Is the qdisc KIND available? Probed in a throw-away namespace.
qdisc_available()
{
	local ns="probe-$(mktemp -u XXXXXX)" ok=1

	ip netns add "$ns" || return 1
	ip -n "$ns" link add qprobe type dummy 2>/dev/null ||
		ip -n "$ns" link add qprobe type veth peer name qprobe1 2>/dev/null
	tc -n "$ns" qdisc add dev qprobe root "$1" 2>/dev/null && ok=0
	ip netns del "$ns"
	return $ok
}

# fuzz_run NAME WHAT [ARGS...]: run the libFuzzer target $FUZZ_DIR/NAME
# for FUZZ_SECONDS (30 by default) with its dictionary (fuzz/NAME.dict,
# without the fuzz_ prefix) if there is one, its own seeds (QOS_FUZZ_SEEDS)
# and ARGS (more corpus directories); any crash, sanitizer report, leak or
# 10 s hang fails, the input kept under $TEST_OUTPUT. WHAT names the
# parser in the log line. Skips when the fuzzer runtime is missing.
fuzz_run()
{
	local name=$1 what=$2 bin=${FUZZ_DIR:-}/$1 corpus dict rc runs

	shift 2
	RET=0
	if [ -z "${FUZZ_DIR:-}" ] || [ ! -x "$bin" ]; then
		echo "SKIP: no $name: clang's libFuzzer runtime (libclang-rt-*-dev, scripts/install-deps.sh) is missing"
		return $ksft_skip
	fi
	corpus=$(mktemp -d)
	defer rm -rf "$corpus"
	dict=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../fuzz/${name#fuzz_}.dict
	QOS_FUZZ_SEEDS=$corpus "$bin" -max_total_time="${FUZZ_SECONDS:-30}" -timeout=10 \
		-print_final_stats=1 $([ -f "$dict" ] && echo "-dict=$dict") \
		-artifact_prefix="${TEST_OUTPUT:-$corpus}/$name-" "$corpus" "$@" >"$corpus/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$corpus/log")
	check_err $rc "$(grep -A20 -m1 'ERROR\|runtime error\|Test unit written' "$corpus/log")"
	log_test "$what fuzzed ${FUZZ_SECONDS:-30}s, ${runs:-?} inputs, no crash, leak or report"
	return 0
}

# send_paced NS DST PORT PPS SECS SIZE: UDP datagrams of SIZE bytes from NS
# to DST, PPS a second for SECS; prints "SENT SECONDS_TAKEN".
send_paced()
{
	in_ns "$1" python3 -c '
import socket, sys, time
dst, port, pps, secs, size = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET, socket.SOCK_DGRAM)
t0 = time.monotonic()
n = 0
while n < pps * secs:
    due = t0 + n / pps
    now = time.monotonic()
    if due > now:
        time.sleep(due - now)
    s.sendto(b"x" * size, (dst, port))
    n += 1
print(n, "%.3f" % (time.monotonic() - t0))' "${@:2}"
}

# until_ok SECONDS CMD...: run CMD every 0.1 s until it succeeds (four
# times as long on a machine marked slow).
until_ok()
{
	local i n=$(($1 * 10))

	[ "$KSFT_MACHINE_SLOW" = yes ] && n=$((n * 4))
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
