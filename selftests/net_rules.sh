#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# 5-tuple rules added live change the class and the rate of real traffic,
# IPv4 and IPv6 side by side, with exact counters.
#
#   h1                          r                            h2
#   UDP sender ---- $R_IF1 [ingress: pip-20pct     $R_IF2 [egress: pip-20pct,
#   sport 40000       + rule add ... proto udp      class from the mark,
#   dport 7000-7100     dport ..., police ...]      counted] ------- sink
#
#  - a family-less rule "proto udp dport 7000-7001 class pip" moves both
#    families' datagrams to 7000 and 7001 (the range's edges) from BE to
#    PIP at r's ingress and egress; 7002, outside the range, stays BE;
#  - a rule per family "src H1 proto udp dport 7100 police 1kbit burst
#    2 frames": of COUNT datagrams sent at once exactly two are green and
#    reach h2 in PIP, the rest are red and dropped at r, counted by the
#    rule's own policer and by the class's drop verdict. 1 kbit/s refills
#    one 106-byte frame in 0.85 s, longer than the send takes (measured,
#    and allowed for under KSFT_MACHINE_SLOW);
#  - rule list -j shows the ports and the policer.
#
# IPv6 counters include r's own MLD/ND traffic: every check is a difference
# between snapshots taken when the counters are quiet.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

COUNT=50
POL_COUNT=20
PAYLOAD=64

require_root
require_cmd jq nsenter python3
topo_h1_r_h2_applied pip-20pct 100mbit
log_setup "apply pip-20pct on r"

# send DST DPORT COUNT: COUNT UDP datagrams of PAYLOAD bytes from h1's port
# 40000, back to back; prints the seconds the sending took.
send()
{
	in_ns "$H1" python3 -c '
import socket, sys, time
dst, dport, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", 40000))
t = time.monotonic()
for _ in range(n):
    s.sendto(b"x" * size, (dst, dport))
print("%.3f" % (time.monotonic() - t))
' "$1" "$2" "$3" $PAYLOAD
}

# ctr FAM: "pip_in be_in pip_out be_out" packets of family FAM at r.
ctr()
{
	local in out

	in=$(qosctl_ns "$R" stats dev "$R_IF1" -j)
	out=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
	echo $(jq -r --arg f "$1" '[.classes[] | select(.name == "pip" or .name == "be")] |
			sort_by(.name) | reverse | map(.ingress[$f].packets) | join(" ")' <<<"$in") \
	     $(jq -r --arg f "$1" '[.classes[] | select(.name == "pip" or .name == "be")] |
			sort_by(.name) | reverse | map(.egress[$f].packets) | join(" ")' <<<"$out")
}

# Counters that do not move for a second.
quiet_ctr()
{
	local a b i

	a=$(ctr "$1")
	for i in 1 2 3 4 5 6 7 8 9 10; do
		sleep 1
		b=$(ctr "$1")
		[ "$a" = "$b" ] && break
		a=$b
	done
	echo "$b"
}

# delta BEFORE AFTER: the four counters' differences.
delta()
{
	local -a b=($1) a=($2)

	echo $((a[0] - b[0])) $((a[1] - b[1])) $((a[2] - b[2])) $((a[3] - b[3]))
}

rule_json()
{
	qosctl_ns "$R" rule list dev "$R_IF1" -j | jq -c --arg n "$1" ".[] | select(.name == \$n) | $2"
}

# A port range steers both ports to PIP and no other, in each family.
port_range()
{
	local fam dst hits0 hits dport before

	qosctl_ns "$R" rule add dev "$R_IF1" name ports proto udp dport 7000-7001 class pip
	check_err $? "rule add ports"
	[ "$(rule_json ports '[.proto, .dport_min, .dport_max, has("sport_min")]')" = '[17,7000,7001,false]' ]
	check_err $? "rule list -j: $(rule_json ports .)"
	log_test "rule add proto udp dport 7000-7001 class pip; list -j shows the range"

	for fam in ipv4 ipv6; do
		[ $fam = ipv4 ] && dst=$H2_V4 || dst=$H2_V6
		hits0=$(rule_json ports .packets)
		for dport in 7000 7001 7002; do
			before=$(quiet_ctr $fam)
			send "$dst" $dport $COUNT >/dev/null
			check_err $? "send to $dst port $dport"
			set -- $(delta "$before" "$(quiet_ctr $fam)")
			if [ $dport = 7002 ]; then
				[ "$*" = "0 $COUNT 0 $COUNT" ]
				check_err $? "$fam dport $dport: pip/be in, pip/be out +$*, expected +0 +$COUNT +0 +$COUNT"
			else
				[ "$*" = "$COUNT 0 $COUNT 0" ]
				check_err $? "$fam dport $dport: pip/be in, pip/be out +$*, expected +$COUNT +0 +$COUNT +0"
			fi
		done
		hits=$(($(rule_json ports .packets) - hits0))
		[ $hits -eq $((2 * COUNT)) ]
		check_err $? "$fam: rule hits +$hits, expected +$((2 * COUNT))"
		log_test "$fam: dport 7000 and 7001 in PIP, 7002 in BE, in and out ($COUNT each)"
	done
}

rule_policer()
{
	local frame4 frame6 fam dst frame name before took green red extra

	# L2 frames at r's ingress: Ethernet + IP + UDP + payload.
	frame4=$((14 + 20 + 8 + PAYLOAD))
	frame6=$((14 + 40 + 8 + PAYLOAD))
	qosctl_ns "$R" rule add dev "$R_IF1" name pol4 src $H1_V4 proto udp dport 7100 class pip \
		police 1kbit burst $((2 * frame4)) action drop
	check_err $? "rule add pol4"
	qosctl_ns "$R" rule add dev "$R_IF1" name pol6 src $H1_V6 proto udp dport 7100 class pip \
		police 1kbit burst $((2 * frame6))
	check_err $? "rule add pol6"
	[ "$(rule_json pol4 '[.police.cir_bps, .police.cbs_bytes]')" = "[1000,$((2 * frame4))]" ]
	check_err $? "rule list -j: $(rule_json pol4 .police)"
	log_test "rule add ... police 1kbit burst 2 frames, per family; list -j shows it"

	for fam in ipv4 ipv6; do
		[ $fam = ipv4 ] && dst=$H2_V4 frame=$frame4 name=pol4 ||
			dst=$H2_V6 frame=$frame6 name=pol6
		before=$(quiet_ctr $fam)
		took=$(send "$dst" 7100 $POL_COUNT)
		check_err $? "send to $dst port 7100"
		set -- $(delta "$before" "$(quiet_ctr $fam)")
		green=$(rule_json $name ".police.green.$fam.packets")
		red=$(rule_json $name ".police.red.$fam.packets")
		# Frames the bucket can refill while the datagrams go out: none here,
		# where sending takes milliseconds; counted in a slow VM.
		extra=0
		[ "$KSFT_MACHINE_SLOW" = yes ] && extra=$(python3 -c "print(int($took * 125 / $frame))")
		echo "    $fam: sent $POL_COUNT in ${took}s; green $green red $red; pip in +$1, pip out +$3"
		[ "$green" -ge 2 ] && [ "$green" -le $((2 + extra)) ] && [ $((green + red)) -eq $POL_COUNT ]
		check_err $? "$fam: policer green $green red $red, expected 2 and $((POL_COUNT - 2))"
		[ "$1" -eq $POL_COUNT ] && [ "$3" -eq "$green" ] && [ "$2" -eq 0 ] && [ "$4" -eq 0 ]
		check_err $? "$fam: pip in +$1 (all, by verdict), pip out +$3 (green only), be +$2 +$4"
		log_test "$fam: 1kbit rule policer passes exactly the burst ($green of $POL_COUNT) in PIP"
	done
}

ALL_TESTS="port_range rule_policer"
tests_run
exit $EXIT_STATUS
