#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Premium IP reservations (qosctl reserve), IPv4 and IPv6, on the router of
#
#   h1 (UDP senders) ---- $R_IF1 [ingress: pip-20pct at 100mbit,  ---- r ---- h2
#                                  reservations here]
#
# pip-20pct admits reservations into pip up to its 20 Mbit/s ceiling less
# 10% headroom: 18 Mbit/s.
#  - admission: 10 + 8 Mbit/s admitted (exactly the share), one more of
#    8 kbit/s refused with the figures, nothing changed by the refusal;
#  - a reserved flow sending twice its rate is held to it (green bytes
#    within the token bucket's bound, the rest demoted to BE), while
#    another reservation, sending at half its rate, keeps all of its own:
#    once with the IPv4 flow held and the IPv6 one keeping, once the other
#    way round;
#  - expiry: a reservation "for 2s" steers its flow into PIP, and after two
#    seconds no longer does, without any command run in between;
#  - a re-apply of the same profile keeps the reservations; pip-5pct (it
#    admits 4.5 Mbit/s) is refused and the device keeps pip-20pct;
#  - reserve apply FILE: applied twice, the same reservations (no
#    duplicates); a bad request names the file, its index and key, and
#    changes nothing.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq nsenter python3
topo_h1_r_h2_applied pip-20pct 100mbit
log_test "apply pip-20pct on r"
[ $EXIT_STATUS -eq 0 ] || exit $ksft_fail

TMP=$(mktemp -d)
defer rm -rf "$TMP"

resv() { qosctl_ns "$R" reserve "$@"; }
list_json() { qosctl_ns "$R" reserve list dev "$R_IF1" -j; }
rule_json()
{
	qosctl_ns "$R" rule list dev "$R_IF1" -j | jq -c --arg n "$1" ".[] | select(.name == \$n) | $2"
}

# send DST DPORT PPS SECONDS PAYLOAD: UDP datagrams from h1 paced at PPS;
# prints how many went out and the seconds it took.
send()
{
	in_ns "$H1" python3 -c '
import socket, sys, time
dst, dport, pps, secs, size = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET, socket.SOCK_DGRAM)
t0 = time.monotonic()
n = 0
while n < pps * secs:
    due = t0 + n / pps
    now = time.monotonic()
    if due > now:
        time.sleep(due - now)
    s.sendto(b"x" * size, (dst, dport))
    n += 1
print(n, "%.3f" % (time.monotonic() - t0))
' "$@"
}

# --- admission ---------------------------------------------------------------
RET=0
out=$(resv add dev "$R_IF1" id a4 src $H1_V4 proto udp dport 7200 rate 10mbit 2>&1)
check_err $? "$out"
out=$(resv add dev "$R_IF1" id a6 src $H1_V6 proto udp dport 7200 rate 8mbit 2>&1)
check_err $? "$out"
[ "$(list_json | jq -c '[.admits_bps, .reserved_bps, .free_bps, ([.reservations[].id] | sort)]')" = \
  '[18000000,18000000,0,["a4","a6"]]' ]
check_err $? "reserve list -j: $(list_json)"
log_test "10mbit (IPv4) and 8mbit (IPv6) admitted: the 18mbit pip admits, 0 free"

# refused NAME WANT ARGS...: `qosctl reserve ARGS` fails with exactly the
# line WANT and leaves the rules as they were.
refused()
{
	local name=$1 want=$2 before err

	shift 2
	RET=0
	before=$(qosctl_ns "$R" rule list dev "$R_IF1" -j)
	err=$(resv "$@" 2>&1)
	check_fail $? "reserve $* worked"
	[ "$err" = "$want" ]
	check_err $? "got '$err', want '$want'"
	[ "$(qosctl_ns "$R" rule list dev "$R_IF1" -j)" = "$before" ]
	check_err $? "the refused command changed the rules"
	log_test "$name"
}

refused "8kbit more refused, with the figures; nothing changed" \
	"qosctl: reserve add: dev $R_IF1: reservation extra of 8kbit refused: class pip admits 18mbit (ceiling 20mbit less 10% headroom), 18mbit is reserved by 2 reservations, 0bit is free" \
	add dev "$R_IF1" id extra src $H1_V4 proto udp dport 7201 rate 8kbit

# --- held to its rate, the other keeps its own ---------------------------------
# 96 kbit/s carries 100 frames/s of 120 bytes (IPv4: 14 + 20 + 8 + 78) and
# 78-byte payloads make 140-byte IPv6 frames: 85.7 frames/s.
PAY=78
held()
{
	local held_fam=$1 keep_fam=$2 hdst kdst hframe kframe rate=96000 secs=3
	local hn ht kn kt hg hr kg kr bound lower

	[ "$KSFT_MACHINE_SLOW" = yes ] && secs=6
	[ $held_fam = ipv4 ] && hdst=$H2_V4 hframe=120 || hdst=$H2_V6 hframe=140
	[ $keep_fam = ipv4 ] && kdst=$H2_V4 kframe=120 || kdst=$H2_V6 kframe=140
	RET=0
	resv del dev "$R_IF1" id held >/dev/null 2>&1
	resv del dev "$R_IF1" id keep >/dev/null 2>&1
	resv add dev "$R_IF1" id held dst $hdst proto udp dport 7300 \
		rate 96kbit burst $((2 * hframe)) >/dev/null
	check_err $? "reserve add held"
	resv add dev "$R_IF1" id keep dst $kdst proto udp dport 7301 rate 96kbit \
		burst $((20 * kframe)) \
		>/dev/null
	check_err $? "reserve add keep"
	# Twice the rate for the held flow, half of it for the other, together.
	send "$hdst" 7300 $((2 * rate / 8 / hframe)) $secs $PAY >"$TMP/h" &
	local hpid=$!
	send "$kdst" 7301 $((rate / 2 / 8 / kframe)) $secs $PAY >"$TMP/k"
	wait $hpid
	read -r hn ht <"$TMP/h"
	read -r kn kt <"$TMP/k"
	hg=$(rule_json held ".police.green.$held_fam.packets")
	hr=$(rule_json held ".police.red.$held_fam.packets")
	kg=$(rule_json keep ".police.green.$keep_fam.packets")
	kr=$(rule_json keep ".police.red.$keep_fam.packets")
	# Token bucket: what conforms is at most the burst plus the rate over
	# the time the packets took to arrive (at most the sending time plus a
	# frame's worth).
	bound=$(python3 -c "print(int(2 + ($ht + 0.05) * $rate / 8 / $hframe))")
	lower=$(python3 -c "print(int(0.8 * $ht * $rate / 8 / $hframe))")
	echo "    held $held_fam: sent $hn in ${ht}s, green $hg (<= $bound, >= $lower) red $hr;" \
	     "keep $keep_fam: sent $kn in ${kt}s, green $kg red $kr"
	[ $((hg + hr)) -eq "$hn" ] && [ "$hg" -le "$bound" ] && [ "$hr" -gt 0 ]
	check_err $? "$held_fam flow not held to its 96kbit"
	[ "$hg" -ge "$lower" ]
	xfail_on_slow check_err $? "$held_fam flow got less than 80% of its reservation"
	[ "$kg" -eq "$kn" ] && [ "$kr" -eq 0 ]
	check_err $? "$keep_fam flow lost some of its own reservation"
	log_test "$held_fam at 2x its reservation held to it; $keep_fam at 0.5x keeps all"
}
resv del dev "$R_IF1" id a4 >/dev/null
resv del dev "$R_IF1" id a6 >/dev/null
held ipv4 ipv6
held ipv6 ipv4

# --- expiry ------------------------------------------------------------------
# pip_in FAM: packets of family FAM counted in pip at r's ingress.
pip_in()
{
	qosctl_ns "$R" stats dev "$R_IF1" -j |
		jq -r --arg f "$1" '.classes[] | select(.name == "pip") | .ingress[$f].packets'
}
for fam in ipv4 ipv6; do
	RET=0
	[ $fam = ipv4 ] && dst=$H2_V4 || dst=$H2_V6
	resv add dev "$R_IF1" id exp-$fam dst $dst proto udp dport 7400 rate 1mbit for 2s >/dev/null
	check_err $? "reserve add for 2s"
	start=$(date +%s.%N)
	p0=$(pip_in $fam)
	send "$dst" 7400 100 0.2 $PAY >/dev/null
	p1=$(pip_in $fam)
	left=$(python3 -c "print(max(0, 2.2 - ($(date +%s.%N) - $start)))")
	if [ "$left" = 0 ]; then
		# The 20 datagrams took longer than the reservation lasted.
		xfail_on_slow check_err 1 "the machine was too slow to send within 2 s"
	fi
	[ $((p1 - p0)) -eq 20 ]
	check_err $? "$fam: $((p1 - p0)) of 20 datagrams in pip while reserved"
	sleep "$left"
	[ "$(list_json | jq -r --arg i exp-$fam '.reservations[] | select(.id == $i) | .expired')" = true ]
	check_err $? "reserve list does not say expired: $(list_json)"
	send "$dst" 7400 100 0.2 $PAY >/dev/null
	p2=$(pip_in $fam)
	[ $((p2 - p1)) -eq 0 ]
	check_err $? "$fam: $((p2 - p1)) of 20 datagrams in pip after the expiry"
	log_test "$fam: a reservation for 2s steers its flow, then expires by itself"
done
RET=0
resv add dev "$R_IF1" id after proto udp dport 7500 rate 1kbit >/dev/null
check_err $? "reserve add after the expiries"
[ "$(list_json | jq -c '[.reservations[].id] | sort')" = '["after","held","keep"]' ]
check_err $? "expired reservations not dropped by the next change: $(list_json | jq -c '[.reservations[].id]')"
log_test "the next change drops the expired reservations"

# --- re-apply ------------------------------------------------------------------
RET=0
ids=$(list_json | jq -c '[.reservations[] | [.id, .rate_bps]] | sort')
qosctl_ns "$R" apply pip-20pct dev "$R_IF1" rate 100mbit
check_err $? "re-apply pip-20pct"
[ "$(list_json | jq -c '[.reservations[] | [.id, .rate_bps]] | sort')" = "$ids" ]
check_err $? "a re-apply of the same profile lost reservations: $(list_json)"
log_test "a re-apply of the same profile keeps every reservation"

RET=0
resv add dev "$R_IF1" id big proto udp dport 7600 rate 5mbit >/dev/null
check_err $? "reserve add big"
err=$(qosctl_ns "$R" apply pip-5pct dev "$R_IF1" rate 100mbit 2>&1)
check_fail $? "pip-5pct applied over 5.193mbit of reservations"
want="qosctl: apply: dev $R_IF1: profile pip-5pct: reservations would take 5193kbit of class pip, which admits 4500kbit (its ceiling 5mbit less 10% headroom)"
[ "$err" = "$want" ]
check_err $? "got '$err', want '$want'"
[ "$(qosctl_ns "$R" show dev "$R_IF1" -j | jq -r .profile)" = pip-20pct ]
check_err $? "the refused apply changed the profile"
log_test "pip-5pct, admitting 4.5mbit, refused over 5193kbit of reservations"

# --- reserve apply FILE ------------------------------------------------------------
RET=0
cat >"$TMP/r.json" <<EOF
{"reservations": [
  {"dev": "$R_IF1", "id": "f4", "src": "$H1_V4", "proto": "udp", "dport": 7700, "rate": "2mbit"},
  {"dev": "$R_IF1", "id": "f6", "src": "$H1_V6", "proto": "udp", "dport": 7700, "rate": "2mbit",
   "burst": "16kb", "for": "1h"}
]}
EOF
for i in 1 2; do
	out=$(resv apply "$TMP/r.json" 2>&1)
	check_err $? "reserve apply, round $i: $out"
done
[ "$out" = "dev $R_IF1: 2 reservations in force" ]
check_err $? "reserve apply said '$out'"
[ "$(list_json | jq -c '[.reservations[] | select(.id | startswith("f")) | [.id, .rate_bps, .burst_bytes]] | sort')" = \
  '[["f4",2000000,0],["f6",2000000,16384]]' ]
check_err $? "after two applies of the file: $(list_json | jq -c .reservations)"
log_test "reserve apply FILE twice: the same two reservations"

sed 's/"rate": "2mbit"}/"rate": "fast"}/' "$TMP/r.json" >"$TMP/bad.json"
refused "a bad request names the file, its index and key; nothing changes" \
	"qosctl: reserve apply: $TMP/bad.json: reservations[0].rate: 'fast' is not a rate from 1kbit to 1000gbit" \
	apply "$TMP/bad.json"

exit $EXIT_STATUS
