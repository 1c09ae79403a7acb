#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Premium IP reservations (qosctl reserve), IPv4 and IPv6, on the router of
#
#   h1 (UDP senders) ---- $R_IF1 --- r --- $R_IF2 ---- h2
#                      (no policy)         [egress: pip-20pct at 100mbit,
#                                           reservations here]
#
# A reservation is made on the interface whose queue it uses, and enforced
# at that interface's egress whatever interface the flow came in by.
# pip-20pct admits reservations into pip up to its 20 Mbit/s ceiling less
# 10% headroom: 18 Mbit/s, and bursts that drain within its 10 ms delay
# bound at 20 Mbit/s: 25000 bytes.
#  - admission: 10 + 8 Mbit/s admitted (exactly the share), one more of
#    8 kbit/s refused with the figures, nothing changed by the refusal;
#  - bursts: 1 Mbit/s with a 1 MB burst refused on the delay bound with
#    the figures; pip's queue is a bfifo of 25000 bytes;
#  - a reserved flow sending twice its rate, entering on $R_IF1, is held
#    to it at $R_IF2's egress (green bytes within the token bucket's
#    bound, remarked EF, the rest demoted to BE), while another
#    reservation, by IPv6 flow label or IPv4 port, sending at half its
#    rate, keeps all of its own: once with the IPv4 flow held and the IPv6
#    one keeping, once the other way round;
#  - expiry: a reservation "for 2s" steers its flow into PIP, and after two
#    seconds no longer does, without any command run in between; the next
#    reserve list deletes it;
#  - a re-apply of the same profile keeps the reservations; pip-5pct (it
#    admits 4.5 Mbit/s) is refused and the device keeps pip-20pct;
#  - reserve apply FILE: applied twice, the same reservations (no
#    duplicates); a bad request names the file, its index and key, and
#    changes nothing.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq nsenter python3
require_qdisc htb
topo_h1_r_h2 || { echo "FAIL: topology"; exit $ksft_fail; }
qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit
check_err $? "apply on $R_IF2"
log_test "apply pip-20pct on r's interface to h2 only"
[ $EXIT_STATUS -eq 0 ] || exit $ksft_fail

tmp_setup

resv() { qosctl_ns "$R" reserve "$@"; }
list_json() { qosctl_ns "$R" reserve list dev "$R_IF2" -j; }
rule_json()
{
	qosctl_ns "$R" rule list dev "$R_IF2" -j | jq -c --arg n "$1" ".[] | select(.name == \$n) | $2"
}

# send DST DPORT PPS SECONDS PAYLOAD: UDP datagrams from h1 paced at PPS;
# prints how many went out and the seconds it took.
send()
{
	send_paced "$H1" "$@"
}

# The reservation file of reserve_file and names.
cat >"$TMP/r.json" <<EOF
{"reservations": [
  {"dev": "$R_IF2", "id": "f4", "src": "$H1_V4", "proto": "udp", "dport": 7700, "rate": "2mbit"},
  {"dev": "$R_IF2", "id": "f6", "src": "$H1_V6", "proto": "udp", "dport": 7700, "rate": "2mbit",
   "burst": "4kb", "for": "1h"}
]}
EOF

# --- admission ---------------------------------------------------------------
admission()
{
	local out

	RET=0
	out=$(resv add dev "$R_IF2" id a4 src $H1_V4 proto udp dport 7200 rate 10mbit 2>&1)
	check_err $? "$out"
	out=$(resv add dev "$R_IF2" id a6 src $H1_V6 proto udp dport 7200 rate 8mbit 2>&1)
	check_err $? "$out"
	[ "$(list_json | jq -c '[.admits_bps, .reserved_bps, .free_bps, ([.reservations[].id] | sort)]')" = \
	  '[18000000,18000000,0,["a4","a6"]]' ]
	check_err $? "reserve list -j: $(list_json)"
	log_test "10mbit (IPv4) and 8mbit (IPv6) admitted: the 18mbit pip admits, 0 free"
	refused "8kbit more refused, with the figures; nothing changed" \
		"qosctl: reserve add: dev $R_IF2: reservation extra of 8kbit refused: class pip admits 18mbit (ceiling 20mbit less 10% headroom), 18mbit is reserved by 2 reservations, 0bit is free" \
		add dev "$R_IF2" id extra src $H1_V4 proto udp dport 7201 rate 8kbit
	resv del dev "$R_IF2" id a4 >/dev/null
	resv del dev "$R_IF2" id a6 >/dev/null
}

# refused NAME WANT ARGS...: `qosctl reserve ARGS` fails with exactly the
# line WANT and leaves the rules as they were.
refused()
{
	local name=$1 want=$2 before err

	shift 2
	RET=0
	before=$(qosctl_ns "$R" rule list dev "$R_IF2" -j)
	err=$(resv "$@" 2>&1)
	check_fail $? "reserve $* worked"
	[ "$err" = "$want" ]
	check_err $? "got '$err', want '$want'"
	[ "$(qosctl_ns "$R" rule list dev "$R_IF2" -j)" = "$before" ]
	check_err $? "the refused command changed the rules"
	log_test "$name"
}


bursts()
{
	local i err leaf

	# --- bursts and the delay bound ------------------------------------------------
	refused "1mbit with a 1mb burst refused on the delay bound, with the figures" \
		"qosctl: reserve add: dev $R_IF2: reservation bursty of 1mbit refused: class pip: burst/delay: its burst of 1048576 bytes and the 0 of 0 admitted reservations (each with a 1514-byte packet) would drain in 420.036ms at 20mbit, over its delay bound of 10.000ms (25000 bytes; 25000 free)" \
		add dev "$R_IF2" id bursty src $H1_V6 proto udp dport 7202 rate 1mbit burst 1mb

	RET=0
	# Five bursts of two frames (3028 bytes, 4542 with a packet) fit the 25000
	# bytes that drain in 10 ms at 20 Mbit/s; a sixth does not.
	for i in 1 2 3 4 5; do
		resv add dev "$R_IF2" id b$i flowlabel 0x1000$i rate 100kbit >/dev/null
		check_err $? "burst $i of 5 refused"
	done
	[ "$(list_json | jq -c '[.delay_bound_us, .queue_bytes, .reserved_burst_bytes, .worst_delay_us, ([.reservations[].burst_bytes] | unique)]')" = \
	  '[10000,25000,22710,9084,[3028]]' ]
	check_err $? "reserve list -j: $(list_json)"
	err=$(resv add dev "$R_IF2" id b6 flowlabel 0x10006 rate 100kbit 2>&1)
	check_fail $? "a sixth burst admitted"
	[[ "$err" = *"the 22710 of 5 admitted reservations"*"would drain in 10.900ms at 20mbit, over its delay bound of 10.000ms"* ]]
	check_err $? "got '$err'"
	leaf=$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -c '.classes[] | select(.name == "pip") | [.leaf, .leaf_limit]')
	[ "$leaf" = '["bfifo",25000]' ]
	check_err $? "pip's queue: $leaf"
	[ "$(tc -n "$R" -j qdisc show dev "$R_IF2" | jq -c '[.[] | select(.parent == "1:12") | .kind, .options.limit]')" = '["bfifo",25000]' ]
	check_err $? "pip's qdisc: $(tc -n "$R" -j qdisc show dev "$R_IF2")"
	for i in 1 2 3 4 5; do
		resv del dev "$R_IF2" id b$i >/dev/null
	done
	log_test "five bursts of two frames fill pip's 10 ms (9.084 ms), a sixth refused; queue 25000 bytes"
}

# --- held to its rate, the other keeps its own ---------------------------------
# pip_out FAM VERDICT: packets of family FAM counted in pip at r's egress
# to h2 with VERDICT (pass, remark, demote, drop).
pip_out()
{
	qosctl_ns "$R" stats dev "$R_IF2" -j |
		jq -r --arg f "$1" --arg v "$2" \
		'.classes[] | select(.name == "pip") | .egress[$f].verdicts[$v].packets'
}

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
	resv del dev "$R_IF2" id held >/dev/null 2>&1
	resv del dev "$R_IF2" id keep >/dev/null 2>&1
	resv add dev "$R_IF2" id held dst $hdst proto udp dport 7300 \
		rate 96kbit burst $((2 * hframe)) remark ef >/dev/null
	check_err $? "reserve add held"
	resv add dev "$R_IF2" id keep dst $kdst proto udp dport 7301 rate 96kbit \
		burst $((20 * kframe)) \
		>/dev/null
	check_err $? "reserve add keep"
	e0=$(pip_out $held_fam remark)
	d0=$(pip_out $held_fam demote)
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
	# Out of r as EF: exactly the green packets; the red ones demoted.
	[ $(($(pip_out $held_fam remark) - e0)) -eq "$hg" ] &&
		[ $(($(pip_out $held_fam demote) - d0)) -eq "$hr" ]
	check_err $? "$held_fam: remarked EF $(($(pip_out $held_fam remark) - e0)) of $hg green," \
		"demoted $(($(pip_out $held_fam demote) - d0)) of $hr red"
	log_test "$held_fam at 2x its reservation, entering on $R_IF1, held to it as EF; $keep_fam at 0.5x keeps all"
}

held_v4()
{
	held ipv4 ipv6
}

held_v6()
{
	held ipv6 ipv4
}

# udp_send: 64-byte payloads, 126-byte frames, one per millisecond: about
# 1 Mbit/s, twice the 504 kbit/s reserved for its flow label.
UDP_SEND=${TEST_OUTPUT:-$(dirname "$(readlink -f "$0")")/../.output/selftests}/udp_send
# --- an IPv6 flow label reservation held
flowlabel()
{
	local e0 t0 t g r bound

	RET=0
	resv add dev "$R_IF2" id fl flowlabel 0x5eed rate 504kbit burst 252 remark ef >/dev/null
	check_err $? "reserve add fl"
	e0=$(pip_out ipv6 remark)
	t0=$(date +%s.%N)
	in_ns "$H1" "$UDP_SEND" $H2_V6 7350 1000 0x5eed >/dev/null
	check_err $? "udp_send"
	t=$(python3 -c "print($(date +%s.%N) - $t0)")
	g=$(rule_json fl ".police.green.ipv6.packets")
	r=$(rule_json fl ".police.red.ipv6.packets")
	bound=$(python3 -c "print(int(2 + ($t + 0.05) * 504000 / 8 / 126))")
	echo "    flow label: 1000 sent in ${t}s, green $g (<= $bound) red $r, EF out $(($(pip_out ipv6 remark) - e0))"
	[ $((g + r)) -eq 1000 ] && [ "$g" -le "$bound" ] && [ "$r" -gt 0 ] &&
		[ $(($(pip_out ipv6 remark) - e0)) -eq "$g" ]
	check_err $? "the flow label reservation was not held to its rate"
	resv del dev "$R_IF2" id fl >/dev/null
	log_test "ipv6 flow label at 2x its reservation held to it as EF"
}

# --- expiry ------------------------------------------------------------------
# pip_in FAM: packets of family FAM counted in pip at r's egress to h2.
pip_in()
{
	qosctl_ns "$R" stats dev "$R_IF2" -j |
		jq -r --arg f "$1" '.classes[] | select(.name == "pip") | .egress[$f].packets'
}
# Reservations for a time: in force, then gone, with or without an apply
# pending.
expiry()
{
	local fam dst start p0 p1 p2 left out

	for fam in ipv4 ipv6; do
		RET=0
		[ $fam = ipv4 ] && dst=$H2_V4 || dst=$H2_V6
		resv add dev "$R_IF2" id exp-$fam dst $dst proto udp dport 7400 rate 1mbit for 2s >/dev/null
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
		send "$dst" 7400 100 0.2 $PAY >/dev/null
		p2=$(pip_in $fam)
		[ $((p2 - p1)) -eq 0 ]
		check_err $? "$fam: $((p2 - p1)) of 20 datagrams in pip after the expiry"
		# The rule is still in the table, unseen by the data path, until a
		# command reads it: reserve list sweeps it.
		[ "$(qosctl_ns "$R" rule list dev "$R_IF2" -j | jq -c --arg i exp-$fam '[.[] | select(.name == $i)] | length')" = 1 ]
		check_err $? "$fam: the expired rule went before anything read it"
		[ "$(list_json | jq -c --arg i exp-$fam '[.reservations[] | select(.id == $i)] | length')" = 0 ]
		check_err $? "$fam: reserve list shows the expired reservation: $(list_json)"
		[ "$(qosctl_ns "$R" rule list dev "$R_IF2" -j | jq -c --arg i exp-$fam '[.[] | select(.name == $i)] | length')" = 0 ]
		check_err $? "$fam: reserve list did not delete the expired rule"
		log_test "$fam: a reservation for 2s steers its flow, expires by itself, swept by reserve list"
	done
	# While an apply waits for its confirmation nothing may change the rules:
	# reserve list shows an expired reservation as such, and sweeps it after.
	RET=0
	resv add dev "$R_IF2" id exp-c proto udp dport 7401 rate 1kbit for 2s >/dev/null
	check_err $? "reserve add for 2s"
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit --confirm 60 >/dev/null
	check_err $? "apply --confirm"
	sleep 2.1
	out=$(list_json)
	check_err $? "reserve list with an apply pending"
	[ "$(jq -c '[.reservations[] | select(.id == "exp-c") | .expired]' <<<"$out")" = '[true]' ]
	check_err $? "reserve list with an apply pending: $out"
	qosctl_ns "$R" confirm dev "$R_IF2" >/dev/null
	check_err $? "confirm"
	[ "$(list_json | jq -c '[.reservations[] | select(.id == "exp-c")] | length')" = 0 ]
	check_err $? "not swept after the confirm: $(list_json)"
	log_test "an apply pending: reserve list shows the expired reservation, then sweeps it"
}

# What the tests before left: held and keep (held_v4, held_v6), and after.
live_left()
{
	RET=0
	resv add dev "$R_IF2" id after proto udp dport 7500 rate 1kbit >/dev/null
	check_err $? "reserve add after the expiries"
	[ "$(list_json | jq -c '[.reservations[].id] | sort')" = '["after","held","keep"]' ]
	check_err $? "reservations after the expiries: $(list_json | jq -c '[.reservations[].id]')"
	log_test "only the live reservations are left"
}

reapply()
{
	local ids err want

	# --- re-apply ------------------------------------------------------------------
	RET=0
	ids=$(list_json | jq -c '[.reservations[] | [.id, .rate_bps]] | sort')
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit
	check_err $? "re-apply pip-20pct"
	[ "$(list_json | jq -c '[.reservations[] | [.id, .rate_bps]] | sort')" = "$ids" ]
	check_err $? "a re-apply of the same profile lost reservations: $(list_json)"
	log_test "a re-apply of the same profile keeps every reservation"

	RET=0
	resv add dev "$R_IF2" id big proto udp dport 7600 rate 5mbit >/dev/null
	check_err $? "reserve add big"
	err=$(qosctl_ns "$R" apply pip-5pct dev "$R_IF2" rate 100mbit 2>&1)
	check_fail $? "pip-5pct applied over 5.193mbit of reservations"
	want="qosctl: apply: dev $R_IF2: profile pip-5pct: reservations would take 5193kbit of class pip, which admits 4500kbit (its ceiling 5mbit less 10% headroom)"
	[ "$err" = "$want" ]
	check_err $? "got '$err', want '$want'"
	[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r .profile)" = pip-20pct ]
	check_err $? "the refused apply changed the profile"
	log_test "pip-5pct, admitting 4.5mbit, refused over 5193kbit of reservations"
}

reserve_file()
{
	local i out

	# --- reserve apply FILE ------------------------------------------------------------
	RET=0
	for i in 1 2; do
		out=$(resv apply "$TMP/r.json" 2>&1)
		check_err $? "reserve apply, round $i: $out"
	done
	[ "$out" = "dev $R_IF2: 2 reservations in force" ]
	check_err $? "reserve apply said '$out'"
	[ "$(list_json | jq -c '[.reservations[] | select(.id | startswith("f")) | [.id, .rate_bps, .burst_bytes]] | sort')" = \
	  '[["f4",2000000,3028],["f6",2000000,4096]]' ]
	check_err $? "after two applies of the file: $(list_json | jq -c .reservations)"
	log_test "reserve apply FILE twice: the same two reservations"

	sed 's/"rate": "2mbit"}/"rate": "fast"}/' "$TMP/r.json" >"$TMP/bad.json"
	refused "a bad request names the file, its index and key; nothing changes" \
		"qosctl: reserve apply: $TMP/bad.json: reservations[0].rate: 'fast' is not a rate from 1kbit to 1000gbit" \
		apply "$TMP/bad.json"
}

names()
{
	local err

	# --- names -------------------------------------------------------------------------
	# An id is a name ([A-Za-z0-9._:-]): one with a terminal escape (ESC [31m)
	# was accepted and printed raw by reserve list. Refused from the command
	# line and from a file, with the byte shown escaped; nothing changes.
	refused "an id with an ESC byte is refused, shown escaped" \
		"qosctl: reserve add: id: name 'r\\x1b[31m' must be 1-15 of letters, digits, '.', '_', ':' or '-'" \
		add dev "$R_IF1" id $'r\e[31m' src $H1_V4 proto udp dport 7800 rate 8kbit
	sed 's/"id": "f4"/"id": "f\\u001b[2J"/' "$TMP/r.json" >"$TMP/esc.json"
	refused "an id with an ESC byte in a file is refused, shown escaped" \
		"qosctl: reserve apply: $TMP/esc.json: reservations[0].id: name 'f\\x1b[2J' must be 1-15 of letters, digits, '.', '_', ':' or '-'" \
		apply "$TMP/esc.json"
	refused "an id with a space is refused" \
		"qosctl: reserve add: id: name 'a b' must be 1-15 of letters, digits, '.', '_', ':' or '-'" \
		add dev "$R_IF1" id "a b" src $H1_V4 proto udp dport 7800 rate 8kbit
	RET=0
	err=$(qosctl_ns "$R" rule add dev "$R_IF1" name $'x\a' src $H1_V4 class pip 2>&1)
	check_fail $? "rule add with a BEL in its name worked"
	[[ "$err" == *"name 'x\\x07' must be"* ]]
	check_err $? "got '$err'"
	log_test "a rule name with a BEL byte is refused, shown escaped"
}

ALL_TESTS="admission bursts held_v4 held_v6 flowlabel expiry live_left reapply reserve_file names"
tests_run
exit $EXIT_STATUS
