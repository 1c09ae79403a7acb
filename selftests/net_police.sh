#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The ingress policer with real traffic, IPv4 and IPv6 side by side.
#
#   h1 ------------------- r ------------------------------ h2
#   $H1_IF    $R_IF1 (policer at ingress)  $R_IF2 (counts)  $H2_IF
#   iperf3 -c / ping                                        iperf3 -s / tcpdump
#
#  - UDP at 1.5 times a 10 and a 100 Mbit/s policer, IPv4 then IPv6: the
#    bytes it admitted are exactly what its bucket gave plus the rate times
#    the time that passed on the kernel's clock (derivation below), counted
#    as Ethernet frames, and what left r toward h2 is exactly what it
#    coloured green;
#  - TCP through a 50 Mbit/s policer with burst auto: never more than the
#    bucket allows, and at least 85% of that in one of three runs, with
#    h1's minimum RTO scaled to this testbed's RTT (see test_tcp);
#  - remark on the wire: h2 sees the new DSCP / Traffic Class on exactly
#    the packets the policer counted red, ECN bits intact.
#
# The profiles are written to a temporary directory (scheduler = none: the
# policer alone, no qdisc to confuse the rates).
#
# Why the UDP check is exact. bpf/lib/tb.h counts tokens in nanobits. A
# packet policed at time now (its policer's clock: bpf_ktime_get_ns, or
# jiffies x tick when the bucket holds ten ticks, as these do) first claims
# the interval since last_ns by moving last_ns to now with a
# compare-and-swap, and credits tc += cir x (now - last_ns) for it, except
# that the bucket is cut to cbs if that overflows it (the excess is lost)
# and that a now not after last_ns changes nothing. Claims tile the clock's
# line whichever CPU wins them, so each nanosecond is credited once. A green packet of L bytes (skb->len, the
# Ethernet frame) then takes 8e9 x L nanobits. The refill intervals add up,
# so between two moments at which no packet is being policed, with tc and
# last_ns read from the policer's map and G the green bytes from its
# counters (a two-colour policer: cbs only, no yellow):
#
#   8e9 x G = tc_before - tc_after + cir x (last_ns_after - last_ns_before) - lost
#
# where lost >= 0 is what overflowed. Hence, on any machine however busy,
#
#   8e9 x G <= tc_before - tc_after + cir x (last_ns_after - last_ns_before)
#
# and a policer that admits more than its rate, by any amount, fails that.
# lost > 0 needs the bucket to fill. Here it holds five seconds at the
# rate and each run starts with it at most a quarter full (a priming run
# at twice the rate empties it, and a run at 1.5 times leaves it nearly
# empty). Between two runs there is iperf3 ending and starting and one
# snapshot: under half a second here, with both cores busy too, but
# seconds when other tests load the machine (load average 10), and there
# h1 may not even offer the rate. So the deficit side is asserted only for
# a run whose own numbers show the bucket could not fill (see cannot_fill:
# h1 fell short of the 1.5 times the rate it was asked for, pause
# included, by less than the bucket's room); a run that does not qualify
# is repeated, up to 3 times, and if none does, the deficit side is
# reported as skipped: the machine was too busy to overload the policer.
# In a run that qualifies lost = 0 and the equality is asserted to the
# nanobit, so a policer that admits less than its rate fails too. cir is
# the rate this test asks for, not one read back, so a rate resolved
# wrongly from the profile fails as well. No bound depends on how long a
# run took by the sender's clock or on what another run measured.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

UDP_LEN=1400
UDP_TIME=${UDP_TIME:-4}
# AF21, TOS byte 0x48: iperf3 -S marks its UDP datagrams and not its TCP
# control connection, so the UDP policer sees nothing else.
UDP_DSCP=af21
UDP_TOS=0x48
# Offered in the measured runs: any overload keeps the bucket empty, and
# the less h1 is asked for, the less it can fall short of (cannot_fill).
# The priming runs offer twice the rate, to empty the bucket faster.
UDP_OFFER_PCT=150
UDP_BURST_MS=5000
PRIME_TIME=6
TCP_TIME=${TCP_TIME:-10}
TCP_TRIES=3
[ "$KSFT_MACHINE_SLOW" = yes ] && TCP_TIME=20

require_root
require_cmd iperf3 jq tcpdump bc bpftool ss
require_qosctl

tmp_setup

# profile NAME DEFAULT [LINE...]: class pol (id 2) with the given
# "key = value" lines and an empty class rest (id 3); DEFAULT names the
# class of whatever no dscp line claims.
profile()
{
	local f=$TMP/$1 def=$2 line

	shift 2
	{
		cat <<-EOF
		[profile]
		description = net_police.sh test profile
		scheduler = none
		default = $def

		[class pol]
		id = 2
		EOF
		for line in "$@"; do
			echo "$line"
		done
		printf '\n[class rest]\nid = 3\n'
	} >"$f"
	echo "$f"
}

# apply DEV PROFILE
apply()
{
	qosctl_ns "$R" apply "$2" dev "$1" rate 10gbit
}

setup()
{
	topo_h1_r_h2 || exit $ksft_fail
	# Started by nsenter directly, which execs iperf3: $! is the PID to
	# kill, not a subshell's.
	nsenter --net="/run/netns/$H2" -- iperf3 -s -p 5201 --logfile "$TMP/iperf3.log" &
	defer kill $!
	wait_listen "$H2" t 5201 || exit $ksft_fail
	# r's egress toward h2 counts the UDP test's class, to compare with
	# what the policer coloured green.
	apply "$R_IF2" "$(profile count rest "dscp = $UDP_DSCP")" || exit $ksft_fail
}

# frame_bytes FAMILY PAYLOAD: L2 bytes of one UDP datagram.
frame_bytes()
{
	local ip=20

	[ "$1" = 6 ] && ip=40
	echo $(($2 + 8 + ip + 14))
}

# policer_map: id of the qos_policers map used by the program on $R_IF1's
# ingress, found from the program qosctl reports rather than a pin path,
# and only if its class pol entry reads as a bucket (see bucket).
policer_map()
{
	local prog m tc last

	prog=$(qosctl_ns "$R" show dev "$R_IF1" -j | jq -r '.programs.ingress') || return 1
	for m in $(bpftool prog show id "$prog" -j | jq -r '.map_ids[]'); do
		if [ "$(bpftool map show id "$m" -j | jq -r '.name')" = qos_policers ]; then
			read -r tc last <<<"$(MAP=$m bucket)"
			[ -n "$last" ] || return 1
			echo "$m"
			return 0
		fi
	done
	return 1
}

# The policer's index is its class id, 2; bpftool takes the key as bytes
# in host order.
if [ "$(printf '\1\0' | od -An -tu2 | tr -d ' ')" = 1 ]; then
	POL_KEY="2 0 0 0"
else
	POL_KEY="0 0 0 2"
fi

# bucket: "TC LAST_NS" of class pol's policer, copied as text: the values
# pass 2^53, where jq would round them.
bucket()
{
	local tc last

	read -r tc last < <(bpftool map lookup id "$MAP" key $POL_KEY | awk '
		/"(tc|last_ns)": / { v = $2; sub(/,$/, "", v); s[$1] = v }
		END { print s["\"tc\":"], s["\"last_ns\":"] }')
	# A bucket a GSO packet left in debt holds it in two's complement
	# (bpf/lib/tb.h, tb_step()): read it as the negative it is.
	[ -n "$tc" ] && [ "$(echo "$tc >= 2^63" | bc)" = 1 ] && tc=$(echo "$tc - 2^64" | bc)
	echo "$tc $last"
}

# counters: for IPv4 and IPv6 in turn, the policer's green packets and
# bytes, its red packets and bytes, and r's egress packets and bytes of
# class pol toward h2.
counters()
{
	{
		qosctl_ns "$R" stats dev "$R_IF1" -j && qosctl_ns "$R" stats dev "$R_IF2" -j
	} | jq -rs '
		(.[1].classes[] | select(.name == "pol") | .egress) as $e
		| .[0].classes[] | select(.name == "pol") | .police as $p
		| ["ipv4", "ipv6"][] as $f
		| $p.green[$f].packets, $p.green[$f].bytes,
		  $p.red[$f].packets, $p.red[$f].bytes,
		  $e[$f].packets, $e[$f].bytes' | paste -sd ' '
}

# policer_clock: now, on the clock class pol's policer reads (struct
# tb_params.tick_ns, chosen by qosctl): CLOCK_MONOTONIC in ns, what
# bpf_ktime_get_ns reads, or with a tick, bpf_jiffies64() x tick lifted by
# 2^63 (bpf/lib/police.h, qos_police_now()). /proc/timer_list has both.
policer_clock()
{
	local tick

	tick=$(bpftool map lookup id "$MAP" key $POL_KEY |
	       awk '/"tick_ns": / { v = $2; sub(/,$/, "", v); print v; exit }')
	[ -n "$tick" ] || return 1
	if [ "$tick" = 0 ]; then
		awk '/^now at / { print $3; exit }' /proc/timer_list
	else
		awk '/^jiffies: / { print $2; exit }' /proc/timer_list |
			sed "s/\$/ * $tick + 2^63/" | bc
	fi
}

# snapshot: "TC LAST_NS NOW" then the counters, on one line, taken while
# no packet is being policed: the bucket is read before and after the
# counters and the clock (NOW), and all again until the two readings
# agree. A green packet policed in between would have taken tokens, and
# its counters move within microseconds of that, in the same run of the
# program, while the reads are milliseconds apart. So the green packets
# that the next snapshot counts and this one does not were all policed
# after NOW.
snapshot()
{
	local b1 b2 c now i

	for ((i = 0; i < 50; i++)); do
		b1=$(bucket)
		c=$(counters)
		now=$(policer_clock)
		b2=$(bucket)
		if [ -n "$c" ] && [ -n "$now" ] && [ -n "${b1% }" ] && [ "$b1" = "$b2" ]; then
			echo "$b1 $now $c"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# udp_run FAMILY BPS SECONDS: iperf3 UDP from h1 to h2 at BPS, marked
# $UDP_DSCP.
udp_run()
{
	local dst=$H2_V4

	[ "$1" = 6 ] && dst=$H2_V6
	in_ns "$H1" iperf3 -"$1" -c "$dst" -p 5201 -u -S $UDP_TOS -b "$2" \
		-l $UDP_LEN -t "$3" >/dev/null
}

# drained RATE SNAPSHOT: is the bucket at most a quarter full? A run that
# starts with more has less room for the pause while h1 starts up and for
# h1 falling behind.
drained()
{
	local tc

	read -r tc _ <<<"$2"
	[ -n "$tc" ] && [ "$(echo "$tc * 4 <= $1 / 8 * $UDP_BURST_MS / 1000 * 8000000000" | bc)" = 1 ]
}

# cannot_fill RATE BEFORE AFTER: could the bucket not have filled during
# the interval? To fill, it must gain its room at the start (cbs -
# tc_before), or cbs after being emptied, so over some stretch the rate
# brought in that much, less a frame, more than h1 offered (in a stretch
# after the bucket was last empty every packet found tokens). Over the
# rest of the interval h1 offers at most what it was asked for, 1.5 times
# the rate (iperf3 -b does not send ahead of its schedule; the exception
# is below), so over any stretch the rate brought in at most 1.5 x rate x
# elapsed - offered more than h1 offered, elapsed and offered being the
# whole interval's: the pause before the run counts in full, h1 falling
# behind in part. Offered is the policer's green and red bytes (fields 4,
# 6, 10 and 12), elapsed its own clock: neither depends on the colours it
# gave, so a wrong policer cannot make a run qualify or not. (The one case
# this misses: a stall of seconds inside a run that iperf3 then made up
# for by sending faster.)
cannot_fill()
{
	local -a a b

	read -r -a a <<<"$2"
	read -r -a b <<<"$3"
	[ "$(echo "$UDP_OFFER_PCT * $1 * (${b[1]} - ${a[1]}) / 100 - \
		8000000000 * ($((b[4] + b[6] + b[10] + b[12] - a[4] - a[6] - a[10] - a[12]))) < \
		($1 / 8 * $UDP_BURST_MS / 1000 - 1514) * 8000000000 - ${a[0]}" | bc)" = 1 ]
}

# udp_check FAMILY RATE BEFORE AFTER QUALIFIED CHECK: the checks on one
# run, between two snapshots (see the top of this file). CHECK=exact: it
# is printed, and held to the checks that need nothing of the sender;
# CHECK=deficit: a run in which the bucket could not fill (QUALIFIED=yes)
# is held to admitting no less than the bucket allowed.
udp_check()
{
	local fam=$1 cir=$2 qualified=$5 frame i tc0 l0 tc1 l1 g0 g1 d secs off
	local -a a b

	frame=$(frame_bytes "$fam" $UDP_LEN)
	read -r -a a <<<"$3"
	read -r -a b <<<"$4"
	tc0=${a[0]} l0=${a[1]} tc1=${b[0]} l1=${b[1]}
	# Fields 3-8 are IPv4's, 9-14 IPv6's.
	i=$((fam == 4 ? 3 : 9))
	local gp=$((b[i] - a[i])) gb=$((b[i + 1] - a[i + 1]))
	local rp=$((b[i + 2] - a[i + 2])) rb=$((b[i + 3] - a[i + 3]))
	local op=$((b[i + 4] - a[i + 4])) ob=$((b[i + 5] - a[i + 5]))
	g0=$((a[4] + a[10])) g1=$((b[4] + b[10]))

	# 8e9 x G - (tc_before - tc_after + cir x elapsed): 0 when exact.
	d=$(echo "8000000000 * ($g1 - $g0) - ($tc0 - $tc1 + $cir * ($l1 - $l0))" | bc)
	# The difference as bytes and as a share of rate x time.
	off="$(echo "scale = 3; d = $d; if (d < 0) d = -d; d / 8000000000" | bc) B ($(echo \
		"scale = 3; d = $d; if (d < 0) d = -d; 100 * d / ($cir * ($l1 - $l0))" | bc)% of rate x time)"
	if [ "$6" = deficit ]; then
		[ "$qualified" = yes ] || return 0
		[ "$(echo "$d < 0" | bc)" = 0 ]
		xfail_on_slow check_err $? "IPv$fam: admitted $off less than the bucket and the rate allow"
		return
	fi

	secs=$(echo "scale = 3; ($l1 - $l0) / 1000000000" | bc)
	printf "    ipv%s: %d green (%d B), %d red in %s s of kernel time; bucket %s -> %s B; admitted - allowed = %s B%s\n" \
		"$fam" "$gp" "$gb" "$rp" "$secs" "$(echo "$tc0 / 8000000000" | bc)" \
		"$(echo "$tc1 / 8000000000" | bc)" "$(echo "scale = 3; $d / 8000000000" | bc)" \
		"$([ "$qualified" = yes ] || echo "; the bucket may have filled, run again")"
	[ $((gb + rb)) -eq $(((gp + rp) * frame)) ]
	check_err $? "IPv$fam: $((gb + rb)) bytes policed in $((gp + rp)) datagrams, not $frame (L2) each"
	[ "$op" -eq "$gp" ] && [ "$ob" -eq "$gb" ]
	check_err $? "IPv$fam: $op packets ($ob B) left r toward h2, the policer passed $gp ($gb B)"
	[ "$(echo "$d > 0" | bc)" = 0 ]
	check_err $? "IPv$fam: admitted $off more than the bucket and the rate allow"
}

test_udp()
{
	local mbit=$1 rate=$(($1 * 1000000)) fam s s0 try n run tag short=
	local -a runs

	apply "$R_IF1" "$(profile "udp$mbit" rest "dscp = $UDP_DSCP" \
		"police-rate = ${mbit}mbit" "police-burst = ${UDP_BURST_MS}ms")"
	check_err $? "apply failed"
	MAP=$(policer_map)
	check_err $? "no qos_policers map with a bucket (st.tc, st.last_ns) on $R_IF1's ingress program"
	if [ "$RET" -ne 0 ]; then
		log_test "UDP at 1.5x a ${mbit} Mbit/s policer: set up"
		return
	fi
	# apply left the bucket full (or, over another policer, with that
	# one's tokens) and its last refill at the time of apply: a priming
	# run (either family would do) empties it and brings the refill up to
	# date. Between two runs there is nothing but a snapshot and a few
	# sums, so the pause the bucket must absorb stays short; the checks
	# are made once all runs are done. A run in which the bucket may have
	# filled is made again, up to 3 times: it says nothing about how
	# little the policer can admit (see cannot_fill).
	udp_run 6 $((2 * rate)) $PRIME_TIME
	s=$(snapshot)
	check_err $? "the policer did not go quiet"
	for fam in 4 6; do
		for ((try = 1; try <= 3 && RET == 0; try++)); do
			# A bucket h1 could not empty leaves little room: that
			# run will not qualify.
			for ((n = 0; n < 3; n++)); do
				drained $rate "$s" && break
				udp_run 6 $((2 * rate)) $PRIME_TIME && s=$(snapshot)
			done
			s0=$s
			udp_run $fam $((rate * UDP_OFFER_PCT / 100)) "$UDP_TIME"
			check_err $? "iperf3 over IPv$fam failed"
			s=$(snapshot)
			check_err $? "the policer did not go quiet after the IPv$fam run"
			[ "$RET" -eq 0 ] || break
			if cannot_fill $rate "$s0" "$s"; then
				runs+=("$fam yes|$s0|$s")
				break
			fi
			runs+=("$fam no|$s0|$s")
		done
		[ "$RET" -eq 0 ] || break
	done
	for fam in 4 6; do
		[[ " ${runs[*]%%|*} " == *" $fam yes "* ]] || short+=" IPv$fam"
	done
	for run in "${runs[@]}"; do
		IFS='|' read -r tag s0 s <<<"$run"
		udp_check ${tag% *} $rate "$s0" "$s" "${tag#* }" exact
	done
	log_test "UDP at 1.5x a ${mbit} Mbit/s policer: admitted <= bucket + rate x time"

	# A family without a run in which the bucket could not fill: the
	# machine was too busy for h1 to overload the policer, and the deficit
	# side was not measured. That is a skip, not a pass; which runs
	# qualify does not depend on the policer's colours, so a wrong policer
	# cannot bring it about.
	for run in "${runs[@]}"; do
		IFS='|' read -r tag s0 s <<<"$run"
		udp_check ${tag% *} $rate "$s0" "$s" "${tag#* }" deficit
	done
	if [ "$RET" -eq 0 ] && [ -n "$short" ]; then
		log_test_skip "UDP at 1.5x a ${mbit} Mbit/s policer: admitted >= bucket + rate x time" \
			"${short# }: no run in which the bucket could not fill (a machine too busy for h1 to overload the policer, or a failure above)"
	else
		log_test "UDP at 1.5x a ${mbit} Mbit/s policer: admitted >= bucket + rate x time"
	fi
}

within()
{
	[ "$(echo "$1 <= $2" | bc -l)" = 1 ]
}

# TCP goodput to L2: a full segment carries MSS bytes of payload in a
# 1514-byte frame (MSS 1448 over IPv4, 1428 over IPv6, with timestamps).
#
# The veth RTT here is ~30 us, so Linux's 200 ms minimum RTO is ~6000 RTTs:
# every loss episode that ends in a timeout stalls TCP for what would be
# minutes at WAN scale, and TCP through burst auto gets ~20% (policer-knee
# shows the same at every burst below a few MB). The seed's testbed had an
# RTT of a few ms, an RTO floor of 50-100 RTTs. TCP_RTO_MIN (5 ms, ~150
# RTTs) restores that ratio on h1's routes; TCP_RTO_MIN=default keeps the
# kernel's floor and shows the unscaled number.
#
# Both TCP checks are on the policer's side, in its bytes and on its
# clock. Green packets policed after a snapshot's clock reading NOW took
# at most what the bucket held at its first refill after NOW (at most cbs)
# plus cir x (last_ns_after - that refill), so
#
#   8e9 x G <= allowed = cbs - tc_after + cir x (last_ns_after - NOW_before)
#
# exactly, on any machine, with cbs what burst auto gives at 50 Mbit/s
# (tb_auto_burst: 1.5 Mbit + 10 ms x rate = 250000 bytes); the slack is
# iperf3's start-up, tens of milliseconds at the rate. A policer that
# admits 10% too much fails it by 6-9% of rate x time here.
#
# And TCP must use at least 85% of allowed: that is TCP's behaviour
# behind a burst sized for it, and it varies from run to run (idle, 96-99%
# here; with four busy loops on the two cores, 87-97%: a stall inflates an
# RTT past rto_min and costs a timeout), while a burst or an RTO floor too
# small for TCP keeps it low in every run (~20% with the kernel's floor).
# So one run in $TCP_TRIES must reach it: a correct setup that misses with
# probability p per run fails with p^$TCP_TRIES. A policer 10% short of its
# rate still gives TCP ~89%; the UDP check's equality is the one that
# catches that (the same bucket code).
TCP_RTO_MIN=${TCP_RTO_MIN:-5ms}
TCP_RATE=50000000
TCP_CBS=250000

# tcp_bytes BEFORE AFTER: "ADMITTED ALLOWED" in nanobits between two
# snapshots (see above).
tcp_bytes()
{
	local -a a b

	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	echo "$(echo "8000000000 * ($((b[4] + b[10])) - $((a[4] + a[10])))" | bc)" \
	     "$(echo "8000000000 * $TCP_CBS - ${b[0]} + $TCP_RATE * (${b[1]} - ${a[2]})" | bc)"
}

test_tcp()
{
	local fam dst bps mss try ok s0 s1 adm alw used

	if [ "$TCP_RTO_MIN" != default ]; then
		ip -n "$H1" route change default via 10.1.1.2 rto_min "$TCP_RTO_MIN" &&
		ip -n "$H1" -6 route change default via 2001:db8:1::2 rto_min "$TCP_RTO_MIN"
		check_err $? "cannot set rto_min on h1's routes"
	fi
	apply "$R_IF1" "$(profile tcp50 pol "police-rate = $((TCP_RATE / 1000000))mbit" \
		"police-burst = auto")"
	check_err $? "apply failed"
	MAP=$(policer_map)
	check_err $? "no qos_policers map with a bucket (st.tc, st.last_ns) on $R_IF1's ingress program"
	for fam in 4 6; do
		[ "$RET" -eq 0 ] || break
		dst=$H2_V4 mss=1448
		[ $fam = 6 ] && dst=$H2_V6 mss=1428
		ok=
		for ((try = 1; try <= TCP_TRIES; try++)); do
			s0=$(snapshot)
			check_err $? "the policer did not go quiet"
			bps=$(in_ns "$H1" iperf3 -$fam -c "$dst" -p 5201 -t "$TCP_TIME" -J |
			      jq -r '.end.sum_received.bits_per_second')
			[ -n "$bps" ] && [ "$bps" != null ]
			check_err $? "iperf3 TCP over IPv$fam failed"
			s1=$(snapshot)
			check_err $? "the policer did not go quiet after the IPv$fam run"
			[ "$RET" -eq 0 ] || break
			read -r adm alw < <(tcp_bytes "$s0" "$s1")
			used=$(echo "scale = 4; 100 * $adm / $alw" | bc)
			printf "    TCP ipv%s run %d: admitted %.2f%% of what the bucket allowed (%d of %d B); goodput %.2f Mbit/s, %.2f Mbit/s of L2\n" \
				$fam $try "$used" "$(echo "$adm / 8000000000" | bc)" \
				"$(echo "$alw / 8000000000" | bc)" "$(echo "$bps / 1000000" | bc -l)" \
				"$(echo "$bps * 1514 / $mss / 1000000" | bc -l)"
			[ "$(echo "$adm <= $alw" | bc)" = 1 ]
			check_err $? "IPv$fam TCP: admitted $(echo "scale = 3; ($adm - $alw) / 8000000000" | bc) bytes more than the bucket and the rate allow"
			within 85 "$used" && { ok=1; break; }
		done
		[ "$RET" -eq 0 ] || break
		[ -n "$ok" ]
		xfail_on_slow check_err $? "IPv$fam TCP used less than 85% of what the policer allowed in $TCP_TRIES runs"
	done
	log_test "TCP through 50 Mbit/s, burst auto: <= bucket, >= 85% of it in 1 of $TCP_TRIES"
}

# Excess remarked to AF11: 30 EF pings at 100 per second against a
# 1 kbit/s policer with a one-frame burst. h2 must see the original
# DSCP 46 on the green ones and DSCP 10 on the red ones, ECN (ECT(1), set
# by the sender) kept, in exactly the numbers the policer counted.
test_remark()
{
	local cap=$TMP/remark.pcap fam capture st green red n_ef n_af filt_ef filt_af i

	# Fresh maps: counters start at zero.
	qosctl_ns "$R" remove dev "$R_IF1"
	apply "$R_IF1" "$(profile remark pol "police-rate = 1kbit" "police-burst = 1514" \
		"police-exceed = remark:af11")"
	check_err $? "apply failed"
	# No fixed sleeps around the capture: tcpdump says when it listens,
	# and -U writes each packet as it comes, so the pings are sent once
	# it listens and it is stopped once the file holds all 60 requests
	# (or after 10 s, and the count below fails).
	spawn_ns "$H2" capture tcpdump -i "$H2_IF" -nn -U -w "$cap" icmp or icmp6
	for ((i = 0; i < 100; i++)); do
		grep -qs "listening on" "$TMP/capture.log" && break
		sleep 0.1
	done
	in_ns "$H1" ping -4 -q -c 30 -i 0.01 -Q 0xb9 "$H2_V4" >/dev/null
	in_ns "$H1" ping -6 -q -c 30 -i 0.01 -Q 0xb9 "$H2_V6" >/dev/null
	for ((i = 0; i < 100; i++)); do
		[ "$(tcpdump -r "$cap" -nn 'icmp[0] == 8 or ip6[40] == 128' 2>/dev/null |
		     wc -l)" -ge 60 ] && break
		sleep 0.1
	done
	stop_pid "$capture"
	st=$(qosctl_ns "$R" stats dev "$R_IF1" -j)

	for fam in 4 6; do
		local jf=ipv4
		if [ $fam = 4 ]; then
			filt_ef='icmp[0] == 8 and ip[1] == 0xb9'
			filt_af='icmp[0] == 8 and ip[1] == 0x29'
		else
			jf=ipv6
			# Traffic Class in bits 4-11 of the first 16-bit word;
			# echo request type 128 right after a 40-byte header.
			filt_ef='ip6[40] == 128 and (ip6[0:2] & 0x0ff0) == 0x0b90'
			filt_af='ip6[40] == 128 and (ip6[0:2] & 0x0ff0) == 0x0290'
		fi
		green=$(echo "$st" | jq ".classes[0].police.green.$jf.packets")
		red=$(echo "$st" | jq ".classes[0].police.red.$jf.packets")
		n_ef=$(tcpdump -r "$cap" -nn "$filt_ef" 2>/dev/null | wc -l)
		n_af=$(tcpdump -r "$cap" -nn "$filt_af" 2>/dev/null | wc -l)
		echo "    ipv$fam: policer green $green red $red; h2 saw EF $n_ef, AF11 $n_af"
		[ "$n_af" -gt 0 ]
		check_err $? "IPv$fam: no packet was remarked"
		# Every request arrives, each with one of the two DSCPs and
		# ECN intact. The policer also coloured whatever else h1 sent
		# (an MLD report, say), hence at most, not equal.
		[ $((n_ef + n_af)) -eq 30 ] && [ "$n_ef" -le "$green" ] && [ "$n_af" -le "$red" ]
		check_err $? "IPv$fam: h2's DSCPs do not match the policer's colours"
	done
	log_test "remark to AF11 seen at h2, ECN kept, counts match the colours"
}

test_udp_10()
{
	test_udp 10
}

test_udp_100()
{
	test_udp 100
}

setup
ALL_TESTS="test_udp_10 test_udp_100 test_tcp test_remark"
tests_run
exit $EXIT_STATUS
