#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `qosctl validate` rejects broken profiles before anything is applied,
# with the file, the line and the key of the fault. No kernel state is
# touched: no namespace needed.

source "$(dirname "$0")/lib.sh"

# Each case is the end of a pipe: run it in this shell, not a subshell,
# so that a failed case counts in EXIT_STATUS.
shopt -s lastpipe

tmp_setup
dir=$TMP

# The base profile; each case replaces or appends lines.
base()
{
	cat <<-'EOT'
	[profile]
	default = be

	[class pip]
	id = 2
	dscp = ef
	priority = 0
	rate = 20%
	ceil = 20%

	[class be]
	id = 3
	priority = 1
	rate = 79%
	EOT
}

# case NAME RATE EXPECTED-SUBSTRING: the profile is read from stdin.
n=0
check_case()
{
	local name=$1 rate=$2 want=$3 f out rc

	n=$((n + 1))
	f="$dir/case$n"
	cat >"$f"
	out=$("$QOSCTL" validate "$f" rate "$rate" 2>&1)
	rc=$?
	check_fail $rc "accepted"
	[[ "$out" == "qosctl: validate: $f:$want"* ]]
	check_err $? "got: $out; want: $f:$want..."
	log_test "rejects $name"
}

# The base profile passes.
base_profile()
{
	"$QOSCTL" validate "$dir/ok" rate 100mbit >/dev/null
	check_err $? "the base profile is rejected"
	log_test "accepts the base profile"
}

# Each fault is named with its file, line and key.
faults()
{
	base | sed 's/^priority = 1$/colour = red/' |
		check_case "an unknown key" 100mbit "13: colour: unknown key in [class be]"
	base | sed 's/^dscp = ef$/dscp = ef, 64/' |
		check_case "a DSCP out of range" 100mbit "6: dscp: '64' is not a DSCP"
	base | sed 's/^rate = 79%$/rate = 81%/' |
		check_case "classes over 100% of the link" 100mbit "14: rate: guaranteed rates add up to 101mbit"
	base | sed 's/^ceil = 20%$/ceil = 60%/' |
		check_case "priority classes over priority-max" 100mbit \
			"9: ceil: classes served before the default class (pip) may take 60mbit, more than priority-max 50mbit"
	base | sed 's/^ceil = 20%$/ceil = 80%/; s/^default = be$/default = be\npriority-max = 70%/' |
		check_case "priority classes over a set priority-max" 100mbit "10: ceil: classes served before"
	{ base; echo "burst = 1000"; } |
		check_case "a burst below one frame" 100mbit "15: burst: [class be] 1000 bytes is less than one full frame"
	base | sed 's/^default = be$/default = be\nscheduler = tbf/' |
		check_case "tbf with two classes" 100mbit "3: scheduler: tbf shapes the whole link as one queue"
	base | sed 's/^default = be$/default = be\nscheduler = prio/; s/^priority = 0$/priority = 1/' |
		check_case "prio bands with one priority" 100mbit "14: priority: classes pip and be share priority 1"
	base | sed 's/^default = be$/default = be\nscheduler = cbq/' |
		check_case "an unknown scheduler" 100mbit "3: scheduler: 'cbq' is not supported"
	base | sed 's/^ceil = 20%$/ceil = 20%\nbounded = yes/; s/^rate = 20%$/rate = 10%/' |
		check_case "bounded with another ceil" 100mbit "10: bounded: [class pip] is bounded"
	{ base; echo "burst = 64kb"; echo "maxburst = 10"; } |
		check_case "both burst and maxburst" 100mbit "16: maxburst: [class be] sets both burst and maxburst"
	base | sed 's/^default = be$/default = be\nnd-class = nc/' |
		check_case "an nd-class that is not a class" 100mbit "3: nd-class: no class named 'nc'"
	{ base; printf '[rule r]\nclass = pip\nproto = udp\ndport = 0000000080\n'; } |
		check_case "a port longer than any port" 100mbit \
			"18: dport: '0000000080' is not a port or a range LO-HI (0-65535, LO <= HI)"
	base | sed 's/^default = be$/default = be\nack-class = acks/' |
		check_case "an ack-class that is not a class" 100mbit "3: ack-class: no class named 'acks'"
	base | sed 's/^default = be$/default = be\nack-class = be/' |
		check_case "the default class as ack-class" 100mbit \
			"3: ack-class: 'be' is the default class, where ACKs already are"
	base | sed 's/^default = be$/default = be\nwash = maybe/' |
		check_case "a wash that is not yes or no" 100mbit "3: wash: 'maybe' is not yes or no"
}

numbers()
{
	# Numbers a person writes as decimal are decimal: "012" is DSCP 12 (it
	# was octal 10, which class be2's 10 then collided with); hex only where
	# documented (flow label, mark-mask, handle). No hex floats, inf or nan.
	base | sed 's/^dscp = ef$/dscp = 8, 012/' >"$dir/leading-zero"
	printf '[class be2]\nid = 5\ndscp = 10\npriority = 1\nrate = 1%%\n' >>"$dir/leading-zero"
	sed -i 's/^rate = 79%$/rate = 78%/' "$dir/leading-zero"
	out=$("$QOSCTL" validate "$dir/leading-zero" rate 100mbit 2>&1)
	check_err $? "dscp = 8, 012 taken as 10: $out"
	log_test "reads a DSCP with a leading zero as decimal"
	base | sed 's/^dscp = ef$/dscp = 0x2e/' |
		check_case "a DSCP in hex" 100mbit "6: dscp: '0x2e' is not a DSCP"
	base | sed 's/^rate = 79%$/rate = 0x1p4mbit/' |
		check_case "a rate as a hex float" 100mbit "14: rate: '0x1p4mbit' is not a rate"
	base | sed 's/^rate = 79%$/rate = infmbit/' |
		check_case "an infinite rate" 100mbit "14: rate: 'infmbit' is not a rate"
	base | sed 's/^ceil = 20%$/ceil = nan%/' |
		check_case "a share that is not a number" 100mbit "9: ceil: 'nan%' is not a share"
	base | sed 's/^default = be$/default = be\nleaf-delay = 0x1p4ms/' |
		check_case "a time as a hex float" 100mbit "3: leaf-delay: '0x1p4ms' is not a time"
	base | sed 's/^default = be$/default = be\nmark-mask = 0x00f00000/' >"$dir/hex-mask"
	"$QOSCTL" validate "$dir/hex-mask" rate 100mbit >/dev/null
	check_err $? "mark-mask = 0x00f00000 is rejected"
	log_test "accepts a mark-mask in hex"
}

long_lines()
{
	# libinih reads 198 bytes of a line and takes the rest as a line of its
	# own: a longer line is an error naming its line, a 198-byte one is read.
	long=$(printf '%*s' 196 '' | tr ' ' x)
	{ base; echo "; $long"; } >"$dir/comment-ok"
	"$QOSCTL" validate "$dir/comment-ok" rate 100mbit >/dev/null
	check_err $? "a 198-byte comment line is rejected"
	log_test "accepts a comment line of 198 bytes"
	{ base; echo "; ${long}x dscp = 8"; } |
		check_case "a comment line longer than the parser reads" 100mbit \
			"15: line: longer than 198 bytes, the most a profile line may have"
	base | sed "s/^description = .*//; s/^default = be$/default = be\ndescription = ${long}yy/" |
		check_case "a key line longer than the parser reads" 100mbit "3: line: longer than 198 bytes"
}

names_and_limits()
{
	# Names are [A-Za-z0-9._:-]; a refused one is shown escaped.
	base | sed $'s/^\\[class be\\]$/[class b\\x1be]/; s/^default = be$/default = b\\x1be/' |
		check_case "a class name with an ESC byte" 100mbit \
			"12: id: class name 'b\\x1be' must be 1-15 of letters, digits, '.', '_', ':' or '-'"
	base | sed $'s/^default = be$/default = b\\x1b[2Je/' |
		check_case "a default naming no class, shown escaped" 100mbit \
			"2: default: no class named 'b\\x1b[2Je'"
	{ base; printf '[rule a/b]\nclass = pip\n'; } |
		check_case "a rule name with a slash" 100mbit \
			"16: class: rule name 'a/b' must be 1-15 of letters, digits, '.', '_', ':' or '-'"
	base | sed 's/^ceil = 20%$/ceil = 200mbit/' |
		check_case "a ceil above the link" 100mbit "9: ceil: [class pip] ceil 200mbit exceeds the link rate 100mbit"
	base | sed 's/^default = be$/default = be\nscheduler = prio/; s/^ceil = 20%$/ceil = 20%\nmaxburst = 4/' |
		check_case "CBQ keys on a prio profile" 100mbit "11: bounded: [class pip] CBQ parameters"
	{ base; echo "egress-remark = 99"; } |
		check_case "an egress-remark out of range" 100mbit "15: egress-remark: '99' is not a DSCP"
	printf '[profile]\ndefault = all\nscheduler = tbf\n[class all]\nid = 3\nrate = 50%%\nlimit = 1000\n' |
		check_case "a TBF queue below one frame" 100mbit "7: limit: [class all] a byte queue of 1000"
	printf '[profile]\ndefault = all\nscheduler = tbf\n[class all]\nid = 3\nrate = 20gbit\n' |
		check_case "a TBF rate libnl cannot carry" 40gbit "6: rate: [class all] TBF rates stop at"
}

# Without a rate, the rate checks are left out.
no_rate()
{
	out=$("$QOSCTL" validate "$dir/ok" 2>&1)
	check_err $? "$out"
	log_test "validates without a rate (no rate checks)"
}

tunnel_dscp()
{
	local mode

	base | sed 's/^default = be$/default = be\ntunnel-dscp = both/' |
		check_case "a tunnel-dscp that is not auto, outer or inner" 100mbit \
			"3: tunnel-dscp: 'both' is not auto, outer or inner"
	for mode in auto outer inner; do
		base | sed "s/^default = be$/default = be\ntunnel-dscp = $mode/" >"$dir/tunnel-$mode"
		"$QOSCTL" validate "$dir/tunnel-$mode" rate 100mbit >/dev/null
		check_err $? "tunnel-dscp = $mode is rejected"
		log_test "accepts tunnel-dscp = $mode"
	done
}

ALL_TESTS="base_profile faults numbers long_lines names_and_limits no_rate tunnel_dscp"
base >"$dir/ok"
tests_run
exit $EXIT_STATUS
