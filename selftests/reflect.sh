#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The STAMP reflector under a sender that means harm or knows another
# dialect (issue 20), IPv4 and IPv6 side by side.
#
#   h1                           r                             h2
#   $H1_IF ------------- $R_IF1       $R_IF2 ------------- $H2_IF
#   10.1.1.1/24           10.1.1.2     10.1.2.2              10.1.2.1/24
#   2001:db8:1::1/64      ::2          2001:db8:2::2         2001:db8:2::1/64
#
#   reflector A :862                                    reflector B :862
#   stamp_send.py (forged, ports, DSCP, CoS TLV) ---->  B
#   probe send ---------------------------------------> stamp_reflector.py
#                                                       twamp-light :8620
#
# Wrong arguments first: one line naming the word, exit 1, nothing bound.
# a. Loop: one datagram forged from A's address and port 862 to B; in 3 s
#    neither reflects anything, B refuses it once (reason port).
# b. Source ports: from port 1000 refused by default (counted, and in
#    /metrics, whose families are those metrics.rst lists), answered with
#    src-port-min 1000.
# b2. Destination: from r, to h2's subnet broadcast and to ff02::1: not
#    answered (every reflector of a link would answer one packet), counted.
# c. DSCP: a DSCP 0 request whose CoS TLV asks for EF is answered with
#    DSCP 0 and RP 1 by default and when EF is not in cos-dscp, with EF
#    and RP 0 when it is; SSID 0 and a PTP timestamp are carried back.
# d. Rates: bursts of 30 against src-burst 10 get exactly 10 replies, and
#    a global-burst of 15 shares 15 between two sources (IPv4 and IPv6);
#    refusals counted per reason.
# e. Allow-list: h1 answered when its prefix is listed, refused (and
#    counted) when not.
# f. Binding: listen on h2's IPv6, IPv4, then both addresses on another
#    port: answered on those only.
# g. Privileges: started as root, it runs as nobody with no group and no
#    capability, and still answers; started unprivileged with
#    CAP_NET_BIND_SERVICE as an ambient capability, it drops that too.
# h. Interop: probe send against a reflector that leaves the SSID 0 and
#    stamps PTP time: every test packet answered, one-way delays read in
#    the right format (under a second, not 70 years).

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq python3 nsenter curl setpriv
require_qosctl

HERE=$(dirname "$(readlink -f "$0")")
tmp_setup

topo_setup

addr()
{
	eval echo "\$${1}_V$2"
}

# refl NS VAR ARGS...: probe reflect -j in NS, its output in $TMP/VAR.log.
refl()
{
	local ns=$1 var=$2

	shift 2
	spawn_ns "$ns" "$var" "$QOSCTL" probe reflect -j "$@"
	wait_listen "$ns" u 862 || { echo "probe reflect did not start: $(cat "$TMP/$var.log")"; return 1; }
}

# rj VAR FILTER: FILTER on the summary a stopped reflector printed.
rj()
{
	tail -n1 "$TMP/$1.log" | jq -r "$2"
}

# stamp FAMILY ARGS...: stamp_send.py from h1 to B (h2) port 862.
stamp()
{
	local fam=$1

	shift
	in_ns "$H1" python3 "$HERE/stamp_send.py" "$(addr H2 "$fam")" "$@"
}

# stamp46 ARGS...: the same to B's IPv4 and IPv6 addresses, both bursts
# within milliseconds: "REPLIES_IPV4 REPLIES_IPV6".
stamp46()
{
	in_ns "$H1" python3 "$HERE/stamp_send.py" "$H2_V4" "$H2_V6" "$@" |
		jq -rs 'map(.replies) | join(" ")'
}

# One wrong invocation per line, "=>", and the one line stderr must say;
# nothing is bound (the reflector's port stays free).
test_errors()
{
	local line args want err many

	RET=0
	many=$(seq -s, -f 10.0.%g.0/24 0 64)
	while IFS= read -r line; do
		args=${line%% => *}
		want=${line#* => }
		eval "set -- $args"
		err=$(in_ns "$H2" "$QOSCTL" probe reflect "$@" 2>&1 >/dev/null)
		[ $? -eq 1 ] && [ "$err" = "qosctl: probe reflect: $want" ]
		check_err $? "probe reflect $args: $err"
	done <<EOF2
allow 10.0.0.0/33 => allow '10.0.0.0/33': not an IPv4 or IPv6 prefix
allow 10.0.0.0/8,2001:db8::/129 => allow '2001:db8::/129': not an IPv4 or IPv6 prefix
allow , => allow ',': expected PREFIX[,PREFIX...]
allow $many => allow: at most 64 prefixes
src-port-min 0 => src-port-min '0': expected 1-65535
src-port-min 65536 => src-port-min '65536': expected 1-65535
src-rate 0 => src-rate '0': expected 1-10000000
src-burst 1000001 => src-burst '1000001': expected 1-1000000
global-rate x => global-rate 'x': expected 1-10000000
global-burst 0 => global-burst '0': expected 1-1000000
cos-dscp 64 => cos-dscp '64': expected DSCPs (0-63 or a name: ef, af11, cs1), comma-separated
cos-dscp ef,af99 => cos-dscp 'af99': expected DSCPs (0-63 or a name: ef, af11, cs1), comma-separated
cos-dscp , => cos-dscp ',': expected DSCP[,DSCP...]
listen , => listen ',': expected ADDRESS[,ADDRESS...]
listen 127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9 => listen: at most 8 addresses
user root => user 'root': is root (uid or gid 0)
EOF2
	[ -z "$(in_ns "$H2" ss -Hlnu 'sport = :862')" ]
	check_err $? "a wrong invocation left something bound to 862"
	log_test "wrong arguments: one line naming the word, exit 1"
}

test_loop()
{
	local fam n

	RET=0
	refl "$H1" ra && refl "$H2" rb
	check_err $? "reflectors did not start"
	for fam in 4 6; do
		stamp $fam --forge --src "$(addr H1 $fam)" --sport 862 --count 1
		check_err $? "IPv$fam: forged datagram not sent"
	done
	sleep 3
	stop_pid "$ra"
	stop_pid "$rb"
	for fam in 4 6; do
		n=$(( $(rj ra ".ipv$fam.packets") + $(rj rb ".ipv$fam.packets") ))
		echo "INFO: IPv$fam: datagrams reflected in 3 s after one forged from port 862: $n"
		[ "$n" = 0 ] && [ "$(rj rb ".ipv$fam.refused.port")" = 1 ]
		check_err $? "IPv$fam: reflected $n, B refused for port: $(rj rb ".ipv$fam.refused.port")"
	done
	log_test "no loop: a datagram forged from another reflector's port 862 refused once"
}

test_ports()
{
	local fam m=$TMP/ports.metrics

	RET=0
	refl "$H2" rb --listen 127.0.0.1:9480
	check_err $? "reflector did not start"
	for fam in 4 6; do
		[ "$(stamp $fam --sport 1000 --count 5 | jq .replies)" = 0 ]
		check_err $? "IPv$fam: test packets from port 1000 answered"
	done
	in_ns "$H2" curl -sf http://127.0.0.1:9480/metrics >"$m"
	check_err $? "no /metrics"
	stop_pid "$rb"
	for fam in 4 6; do
		[ "$(rj rb ".ipv$fam.refused.port") $(rj rb ".ipv$fam.packets")" = "5 0" ]
		check_err $? "IPv$fam: refused for port, reflected: $(rj rb ".ipv$fam.refused.port") $(rj rb ".ipv$fam.packets")"
		grep -qx "qosctl_reflect_refused_total{family=\"ipv$fam\",reason=\"port\"} 5" "$m"
		check_err $? "IPv$fam: /metrics: $(grep refused_total "$m" | tr '\n' ' ')"
	done
	# Families and types are those metrics.rst lists; 16 series.
	diff <(awk '/^# TYPE/ { print $3, $4 }' "$m" | sort) \
		<(awk '/^``qosctl_reflect_/ { gsub(/``/, "", $1); print $1, $2 }' \
		  "$HERE/../Documentation/metrics.rst" | sort) >"$TMP/famdiff"
	check_err $? "families, /metrics < > metrics.rst: $(cat "$TMP/famdiff")"
	[ "$(grep -vc '^#' "$m")" = 16 ]
	check_err $? "$(grep -vc '^#' "$m") series, expected 16"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$m" >"$TMP/promtool" 2>&1
		check_err $? "promtool: $(head -3 "$TMP/promtool")"
	fi
	refl "$H2" rb src-port-min 1000
	for fam in 4 6; do
		[ "$(stamp $fam --sport 1000 --count 5 | jq .replies)" = 5 ]
		check_err $? "IPv$fam: src-port-min 1000: port 1000 not answered"
	done
	stop_pid "$rb"
	log_test "source ports below 1024 refused and counted, src-port-min moves the bound"
}

# cos_case ARGS -- WANT: a DSCP 0 request asking EF, five times, against
# B run with ARGS: "replies tos rp dscp1 dscp2 ssid echo_ok" must be WANT.
cos_case()
{
	local args=() fam got want

	while [ "$1" != -- ]; do args+=("$1"); shift; done
	want=$2
	refl "$H2" rb "${args[@]}"
	for fam in 4 6; do
		got=$(stamp $fam --dscp 0 --cos 46 --ssid 0 --count 5 |
		      jq -r '"\(.replies) \(.tos) \(.rp) \(.dscp1) \(.dscp2) \(.ssid) \(.echo_ok)"')
		[ "$got" = "$want" ]
		check_err $? "IPv$fam, ${args[*]:-defaults}: replies tos rp dscp1 dscp2 ssid echo: $got, expected $want"
	done
	stop_pid "$rb"
}

# From r, on h2's link: a test packet to the subnet's broadcast address
# and one to all nodes (ff02::1) get no reply, and are counted as such.
test_dst()
{
	local fam got

	RET=0
	refl "$H2" rb
	got=$(in_ns "$R" python3 "$HERE/stamp_send.py" 10.1.2.255 "ff02::1%$R_IF2" |
	      jq -rs 'map(.replies) | join(" ")')
	stop_pid "$rb"
	[ "$got" = "0 0" ]
	check_err $? "replies to broadcast, to ff02::1: $got"
	for fam in 4 6; do
		[ "$(rj rb ".ipv$fam.refused.destination") $(rj rb ".ipv$fam.packets")" = "1 0" ]
		check_err $? "IPv$fam: refused for destination, reflected: $(rj rb ".ipv$fam.refused.destination") $(rj rb ".ipv$fam.packets")"
	done
	log_test "no reply to a broadcast or multicast destination, counted"
}

test_cos()
{
	local fam

	RET=0
	cos_case -- "5 [0] [1] [46] [0] [0] true"
	for fam in 4 6; do
		[ "$(rj rb ".ipv$fam.cos_refused")" = 5 ]
		check_err $? "IPv$fam: cos_refused $(rj rb ".ipv$fam.cos_refused")"
	done
	cos_case cos-dscp af11,cs1 -- "5 [0] [1] [46] [0] [0] true"
	cos_case cos-dscp 0,ef -- "5 [184] [0] [46] [0] [0] true"
	log_test "reply DSCP: the one received unless cos-dscp allows DSCP1; RP says which"
}

test_rate()
{
	local got

	RET=0
	refl "$H2" rb src-rate 1 src-burst 10
	got=$(stamp46 --count 30)
	stop_pid "$rb"
	[ "$got $(rj rb '"\(.ipv4.refused["source-rate"]) \(.ipv6.refused["source-rate"])"')" = "10 10 20 20" ]
	check_err $? "src-burst 10: replies v4 v6, refused v4 v6: $got $(rj rb '"\(.ipv4.refused["source-rate"]) \(.ipv6.refused["source-rate"])"')"

	# Each source alone could have all 30; together they share 15, in
	# whatever order the reflector reads its two sockets.
	refl "$H2" rb src-rate 1 src-burst 100 global-rate 1 global-burst 15
	got=$(stamp46 --count 30)
	stop_pid "$rb"
	got="$((${got% *} + ${got#* })) $(rj rb '"\(.ipv4.refused["source-rate"] + .ipv6.refused["source-rate"]) \(.ipv4.refused["global-rate"] + .ipv6.refused["global-rate"])"')"
	[ "$got" = "15 0 45" ]
	check_err $? "global-burst 15: replies, refused for source-rate, for global-rate: $got"
	log_test "rate limits: per source and global token buckets, refusals by reason"
}

test_allow()
{
	local fam

	RET=0
	refl "$H2" rb allow 10.1.1.0/24,2001:db8:1::/64
	for fam in 4 6; do
		[ "$(stamp $fam --count 5 | jq .replies)" = 5 ]
		check_err $? "IPv$fam: h1's prefix listed, not answered"
	done
	stop_pid "$rb"
	refl "$H2" rb allow 10.9.0.0/16,2001:db8:9::/64
	for fam in 4 6; do
		[ "$(stamp $fam --count 5 | jq .replies)" = 0 ]
		check_err $? "IPv$fam: h1's prefix not listed, answered"
	done
	stop_pid "$rb"
	for fam in 4 6; do
		[ "$(rj rb ".ipv$fam.refused.allow")" = 5 ]
		check_err $? "IPv$fam: refused for allow: $(rj rb ".ipv$fam.refused.allow")"
	done
	log_test "allow-list of IPv4 and IPv6 prefixes, others refused and counted"
}

# privs PID WANT_UID: the reflector's identity and capabilities.
privs()
{
	local want="Uid: $2 $2 $2 $2|Gid: $2 $2 $2 $2|Groups:|CapInh: 0000000000000000|CapPrm: 0000000000000000|CapEff: 0000000000000000|CapAmb: 0000000000000000|NoNewPrivs: 1"
	local got

	got=$(grep -E '^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Amb)|NoNewPrivs):' "/proc/$1/status" |
	      tr -s ' \t' ' ' | sed 's/ $//' | paste -sd'|')
	[ "$got" = "$want" ]
	check_err $? "/proc/$1/status: $got"
}

# bind LISTEN PORT: reflect on LISTEN and PORT; "IPV4 IPV6" replies to 3
# test packets per family to that port.
bind_case()
{
	local got

	spawn_ns "$H2" rb "$QOSCTL" probe reflect -j listen "$1" port "$2"
	wait_listen "$H2" u "$2" || { echo "probe reflect did not start: $(cat "$TMP/rb.log")"; return 1; }
	got=$(stamp46 --port "$2" --count 3)
	stop_pid "$rb"
	echo "$got"
}

test_bind()
{
	local got err

	RET=0
	got="$(bind_case "$H2_V6" 8862) / $(bind_case "$H2_V4" 8862) / $(bind_case "$H2_V4,$H2_V6" 8863)"
	[ "$got" = "0 3 / 3 0 / 3 3" ]
	check_err $? "replies v4 v6 on listen v6 / v4 / both: $got"
	err=$(in_ns "$H2" "$QOSCTL" probe reflect listen "$H2_V4,10.1.2" 2>&1 >/dev/null)
	[ $? = 1 ] && [ "$err" = "qosctl: probe reflect: listen '10.1.2': not an IPv4 or IPv6 address" ]
	check_err $? "listen $H2_V4,10.1.2: $err"
	log_test "listen ADDRESS[,ADDRESS...] and port: bound where told, IPv4 and IPv6"
}

test_privs()
{
	local err

	RET=0
	refl "$H2" rb
	privs "$rb" 65534
	[ "$(stamp46 --count 3)" = "3 3" ]
	check_err $? "as nobody: not answering"
	stop_pid "$rb"
	spawn_ns "$H2" rb setpriv --reuid 65534 --regid 65534 --clear-groups \
		--inh-caps +net_bind_service --ambient-caps +net_bind_service \
		"$QOSCTL" probe reflect -j
	wait_listen "$H2" u 862
	check_err $? "unprivileged with CAP_NET_BIND_SERVICE: did not bind 862: $(cat "$TMP/rb.log")"
	privs "$rb" 65534
	[ "$(stamp 6 --count 3 | jq .replies)" = 3 ]
	check_err $? "unprivileged: not answering"
	stop_pid "$rb"
	err=$(in_ns "$H2" "$QOSCTL" probe reflect user nosuchuser 2>&1 >/dev/null)
	[ $? = 1 ] && [ "$err" = "qosctl: probe reflect: user 'nosuchuser': no such user" ]
	check_err $? "user nosuchuser: $err"
	log_test "root given up for nobody once bound, no capability kept"
}

test_interop()
{
	local fam got

	RET=0
	spawn_ns "$H2" pyrefl python3 "$HERE/stamp_reflector.py" 8620 "$TMP/py.log" twamp-light
	wait_listen "$H2" u 8620
	check_err $? "stamp_reflector.py did not start: $(cat "$TMP/pyrefl.log")"
	for fam in 4 6; do
		in_ns "$H1" "$QOSCTL" probe send "$(addr H2 $fam)" port 8620 interval 10ms count 20 \
			-j >"$TMP/tl$fam.json"
		check_err $? "IPv$fam: probe send failed"
		got=$(jq -r '[.streams[] | "\(.received) \(.lost) \(.forward.p50_ns >= 0 and
			.forward.p50_ns < 1000000000)"] | unique | join(",")' "$TMP/tl$fam.json")
		[ "$got" = "20 0 true" ]
		check_err $? "IPv$fam: received lost forward-in-range: $got ($(jq -c '[.streams[].forward.p50_ns]' "$TMP/tl$fam.json"))"
	done
	stop_pid "$pyrefl"
	log_test "interop: a reflector that leaves SSID 0 and stamps PTP time"
}

ALL_TESTS="test_errors test_loop test_ports test_dst test_cos test_rate test_allow test_bind test_privs test_interop"
tests_run

exit $EXIT_STATUS
