#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What qosctl trusts on disk: /run/qosctl only when it is a root-owned
# directory nobody else may write, and nothing at all in bpffs.
#
#   R: st0 ---- st1 (veth, both in R; no traffic)
#
#   Every qosctl command runs in a private mount namespace
#   (unshare -m --propagation private) with a fresh tmpfs on /run and a
#   fresh bpffs instance on /sys/fs/bpf: the host's /run/qosctl and bpffs
#   are never touched, whatever the case plants there. The tmpfs covers
#   all of /run, not only /run/qosctl, because case c makes /run/qosctl
#   itself a symlink.
#
# a. /run/qosctl owned by nobody: apply and remove refused, naming it;
# b. /run/qosctl group or world writable: refused;
# c. /run/qosctl a symlink to another directory: refused, nothing created
#    in the target;
# d. an unprivileged user's /sys/fs/bpf/qosctl holding a symlink named like
#    the interface to another tool's bpffs directory: apply, show, rule
#    add, stats and remove succeed and leave every file in bpffs as it was;
# e. /run/qosctl read-only or full: apply and rule add fail with a clear
#    error and tc is exactly as before;
# f. bpffs not mounted at all: every command works;
# g. the record of the qdisc probe (/run/qosctl/qdisc-probe): used when its
#    key names this kernel (a forged "no qdisc" record makes an apply fail
#    for want of HTB), probed again and replaced when it names another
#    kernel, and ignored and replaced, never followed, when it is owned by
#    another user, writable by others, hard-linked or a symlink.
#
# Before the redesign qosctl created /run/qosctl 0755 with mkdir() and
# opened NAME.lock in it by path: it used a directory owned by anyone, with
# any mode, and followed a symlink there, creating its lock file in the
# target (a, b, c failed); it kept its maps pinned in
# /sys/fs/bpf/qosctl/NAME, created with mkdir -p, so it pinned into, and on
# remove emptied, whatever directory the symlink pointed to (d failed); and
# it refused to run without bpffs (f failed).

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq tc unshare nsenter setpriv bpftool python3 mountpoint
require_qosctl

tmp_setup
DEV=st0
NOBODY=65534

# priv SCRIPT: run SCRIPT with bash in $R, in a private mount namespace
# with a fresh /run and bpffs. The namespace is entered before /run is
# covered, so /run/netns is not needed inside. Exit 99: the setup failed.
priv()
{
	unshare -m --propagation private -- \
		nsenter --net="/run/netns/$R" -- \
		env QOSCTL="$QOSCTL" DEV="$DEV" TMP="$TMP" NOBODY=$NOBODY bash -c '
			mount -t tmpfs -o mode=0755 st-run /run &&
			mount -t bpf -o mode=1777 st-bpf /sys/fs/bpf || exit 99
			'"$1"
}

# tc_state: the device as tc sees it, no counters (tc_snapshot: qdiscs
# sorted, as the scripts run by priv below write it too).
tc_state()
{
	tc_snapshot "$R" $DEV
}

# field NAME TEXT: the value of the line "NAME=value" in TEXT.
field()
{
	sed -n "s/^$1=//p" <<<"$2"
}

# refused WHAT OUT: an apply and a remove that ran as $OUT reports them,
# both refused naming /run/qosctl.
refused()
{
	local what=$1 out=$2 c

	for c in apply remove; do
		[ "$(field "$c-rc" "$out")" = 1 ] ||
			{ echo "$what: $c exited '$(field "$c-rc" "$out")'"; return 1; }
		[[ "$(field "$c-err" "$out")" == "qosctl: $c: /run/qosctl: "*"refused"* ]] ||
			{ echo "$what: $c said '$(field "$c-err" "$out")'"; return 1; }
	done
}

# Apply then remove, "NAME-rc=" and "NAME-err=" lines for each.
APPLY_REMOVE='
	err=$("$QOSCTL" apply diffserv4 dev $DEV rate 100mbit 2>&1); echo "apply-rc=$?"
	echo "apply-err=$err"
	err=$("$QOSCTL" remove dev $DEV 2>&1); echo "remove-rc=$?"
	echo "remove-err=$err"
'

setup()
{
	setup_ns R || return 1
	defer_state "$R" || return 1
	ip -n "$R" link add $DEV type veth peer name st1 && ip -n "$R" link set $DEV up &&
		ip -n "$R" link set st1 up
}

test_applied()
{
	local out

	out=$(priv '
		"$QOSCTL" apply pip-20pct dev $DEV rate 100mbit || exit 1
		stat -c "mode=%u %a %F" /run/qosctl
	' 2>&1)
	check_err $? "apply: $out"
	[ "$(field mode "$out")" = "0 700 directory" ]
	check_err $? "/run/qosctl created as '$(field mode "$out")', not root's 0700"
	log_test "apply creates /run/qosctl root-owned, mode 0700"
}

test_not_root_owned()
{
	local before out msg

	before=$(tc_state)
	out=$(priv '
		mkdir -m 0700 /run/qosctl && chown $NOBODY:$NOBODY /run/qosctl || exit 99
		'"$APPLY_REMOVE"'
		echo "files=$(ls -A /run/qosctl)"
	' 2>&1)
	check_err $? "setup: $out"
	msg=$(refused "owned by $NOBODY" "$out")
	check_err $? "$msg"
	[ -z "$(field files "$out")" ]
	check_err $? "created in /run/qosctl: $(field files "$out")"
	[ "$(tc_state)" = "$before" ]
	check_err $? "tc changed"
	log_test "a. /run/qosctl owned by uid $NOBODY: apply and remove refused"
}

test_writable()
{
	local before out msg mode

	before=$(tc_state)
	for mode in 0777 0770 0702; do
		out=$(priv '
			mkdir /run/qosctl && chmod '$mode' /run/qosctl || exit 99
			'"$APPLY_REMOVE"'
			echo "files=$(ls -A /run/qosctl)"
		' 2>&1)
		check_err $? "setup: $out"
		msg=$(refused "mode $mode" "$out")
		check_err $? "$msg"
		[ -z "$(field files "$out")" ]
		check_err $? "mode $mode: created in /run/qosctl: $(field files "$out")"
	done
	[ "$(tc_state)" = "$before" ]
	check_err $? "tc changed"
	log_test "b. /run/qosctl writable by group or others: refused"
}

test_symlink()
{
	local before out msg owner

	before=$(tc_state)
	# The target passes every check qosctl makes of a directory: only
	# the symlink itself is wrong. Then one an attacker owns.
	for owner in 0 $NOBODY; do
		out=$(priv '
			mkdir -m 0700 /run/elsewhere && chown '$owner' /run/elsewhere &&
				ln -s /run/elsewhere /run/qosctl || exit 99
			'"$APPLY_REMOVE"'
			echo "files=$(ls -A /run/elsewhere)"
			[ -L /run/qosctl ] && echo "link=yes"
		' 2>&1)
		check_err $? "setup: $out"
		msg=$(refused "symlink to a directory of uid $owner" "$out")
		check_err $? "$msg"
		[ -z "$(field files "$out")" ] && [ "$(field link "$out")" = yes ]
		check_err $? "target of uid $owner: created '$(field files "$out")', link '$(field link "$out")'"
	done
	[ "$(tc_state)" = "$before" ]
	check_err $? "tc changed"
	log_test "c. /run/qosctl a symlink: refused, nothing created in the target"
}

test_bpffs_planted()
{
	local out rc

	out=$(priv '
		mkdir /sys/fs/bpf/othertool &&
			bpftool map create /sys/fs/bpf/othertool/victim type array key 4 \
				value 4 entries 1 name victim &&
			bpftool map update pinned /sys/fs/bpf/othertool/victim \
				key 0 0 0 0 value 1 2 3 4 || exit 99
		setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups sh -c "
			mkdir /sys/fs/bpf/qosctl &&
			ln -s /sys/fs/bpf/othertool /sys/fs/bpf/qosctl/$DEV &&
			ln -s /sys/fs/bpf/othertool/victim /sys/fs/bpf/qosctl/qos_cfg" || exit 99
		snap() {
			ls -laR --time-style=full-iso /sys/fs/bpf
			bpftool -j map show pinned /sys/fs/bpf/othertool/victim
			bpftool -j map dump pinned /sys/fs/bpf/othertool/victim
		}
		before=$(snap)
		for c in "apply diffserv4 dev $DEV rate 100mbit" "show dev $DEV" \
			 "rule add dev $DEV dst 2001:db8:99::/48 class pip" "stats dev $DEV" \
			 "rule list dev $DEV" "apply pip-20pct dev $DEV rate 100mbit"; do
			err=$("$QOSCTL" $c 2>&1 >/dev/null) || echo "failed=$c: $err"
		done
		[ "$(snap)" = "$before" ] || echo "changed=after apply"
		err=$("$QOSCTL" remove dev $DEV 2>&1) || echo "failed=remove: $err"
		after=$(snap)
		[ "$after" = "$before" ] || { echo "changed=after remove"; diff <(echo "$before") <(echo "$after"); }
		echo ok=1
	' 2>&1)
	rc=$?
	[ $rc -eq 0 ] && [ "$(field ok "$out")" = 1 ]
	check_err $? "exit $rc: $out"
	[ -z "$(field failed "$out")" ]
	check_err $? "$(field failed "$out")"
	[ -z "$(field changed "$out")" ]
	check_err $? "bpffs changed $(field changed "$out"): $out"
	out=$(tc -n "$R" filter show dev $DEV ingress)
	[ -z "$out" ]
	check_err $? "filters left after remove: $out"
	log_test "d. planted /sys/fs/bpf/qosctl symlinks: commands work, bpffs untouched"
}

test_readonly()
{
	local before out

	# Nothing applied, and pip-20pct applied.
	before=$(tc_state)
	out=$(priv '
		mkdir /run/qosctl && mount -t tmpfs -o mode=0700 st-qosctl /run/qosctl &&
			mount -o remount,ro /run/qosctl || exit 99
		err=$("$QOSCTL" apply pip-20pct dev $DEV rate 100mbit 2>&1); echo "rc=$?"
		echo "err=$err"
	' 2>&1)
	check_err $? "setup: $out"
	[ "$(field rc "$out")" = 1 ] &&
		[[ "$(field err "$out")" == "qosctl: apply: /run/qosctl/"*": Read-only file system" ]]
	check_err $? "apply on a fresh device: $out"
	[ "$(tc_state)" = "$before" ]
	check_err $? "tc changed"
	log_test "e. /run/qosctl read-only: apply on a clean device fails, tc unchanged"

	out=$(priv '
		"$QOSCTL" apply pip-20pct dev $DEV rate 100mbit || exit 99
		mount -t tmpfs -o mode=0700 st-qosctl /run/qosctl &&
			mount -o remount,ro /run/qosctl || exit 99
		tc -d qdisc show dev $DEV | sort >$TMP/before
		tc -d class show dev $DEV >>$TMP/before
		tc filter show dev $DEV ingress >>$TMP/before
		tc filter show dev $DEV egress >>$TMP/before
		err=$("$QOSCTL" apply diffserv4 dev $DEV rate 100mbit 2>&1); echo "apply-rc=$?"
		echo "apply-err=$err"
		err=$("$QOSCTL" rule add dev $DEV dst 2001:db8:98::/48 class pip 2>&1)
		echo "rule-rc=$?"
		echo "rule-err=$err"
		echo "profile=$("$QOSCTL" show dev $DEV -j | jq -r .profile)"
	' 2>&1)
	check_err $? "setup: $out"
	[ "$(tc_state)" = "$(cat "$TMP/before")" ]
	check_err $? "tc changed: $(diff "$TMP/before" <(tc_state) | head -5)"
	for c in apply rule; do
		[ "$(field $c-rc "$out")" = 1 ] &&
			[[ "$(field $c-err "$out")" == *"/run/qosctl/"*": Read-only file system" ]]
		check_err $? "$c: $out"
	done
	[ "$(field profile "$out")" = pip-20pct ]
	check_err $? "show after the failed apply: $(field profile "$out")"
	log_test "e. /run/qosctl read-only: apply and rule add over pip-20pct fail, tc unchanged"

	# Full: the lock file (no data) fits, the transaction record does not.
	out=$(priv '
		mkdir /run/qosctl && mount -t tmpfs -o mode=0700,size=64k st-qosctl /run/qosctl &&
			{ dd if=/dev/zero of=/run/qosctl/fill bs=4k 2>/dev/null; true; } || exit 99
		tc -d qdisc show dev $DEV | sort >$TMP/before
		tc -d class show dev $DEV >>$TMP/before
		tc filter show dev $DEV ingress >>$TMP/before
		tc filter show dev $DEV egress >>$TMP/before
		err=$("$QOSCTL" apply diffserv4 dev $DEV rate 100mbit 2>&1); echo "rc=$?"
		echo "err=$err"
		echo "txn=$(ls /run/qosctl | grep -c txn)"
	' 2>&1)
	check_err $? "setup: $out"
	[ "$(field rc "$out")" = 1 ] &&
		[ "$(field err "$out")" = "qosctl: apply: /run/qosctl: writing the transaction record: No space left on device" ]
	check_err $? "apply: $out"
	[ "$(field txn "$out")" = 0 ]
	check_err $? "a partial transaction record was left"
	[ "$(tc_state)" = "$(cat "$TMP/before")" ]
	check_err $? "tc changed: $(diff "$TMP/before" <(tc_state) | head -5)"
	log_test "e. /run/qosctl full: apply fails before any change, tc unchanged"

	out=$(priv '"$QOSCTL" remove dev $DEV' 2>&1)
	check_err $? "remove: $out"
}

test_no_bpffs()
{
	local out

	out=$(priv '
		while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 99; done
		for c in "apply pip-20pct dev $DEV rate 100mbit" "show dev $DEV" \
			 "rule add dev $DEV dst 2001:db8:97::/48 class pip" "stats dev $DEV" \
			 "rule list dev $DEV" "apply diffserv4 dev $DEV rate 100mbit" \
			 "remove dev $DEV"; do
			err=$("$QOSCTL" $c 2>&1 >/dev/null) || echo "failed=$c: $err"
		done
		echo ok=1
	' 2>&1)
	check_err $? "$out"
	[ "$(field ok "$out")" = 1 ] && [ -z "$(field failed "$out")" ]
	check_err $? "$out"
	mountpoint -q /sys/fs/bpf
	check_err $? "the host lost its bpffs"
	[ -z "$(tc -n "$R" filter show dev $DEV ingress)" ]
	check_err $? "filters left after remove"
	log_test "f. bpffs not mounted: apply, show, stats, rules and remove work"
}

# The record's cases, each after an apply that probed and wrote the
# record, "NAME-rc=" and "NAME-rec=" lines for each: the forged record
# "$key 0" says this kernel has no qdisc at all.
KFACTS='
	f=/run/qosctl/qdisc-probe
	"$QOSCTL" apply pip-20pct dev $DEV rate 100mbit >/dev/null || exit 1
	rec=$(cat $f) && key=${rec% *} || exit 1
	echo "rec=$rec"
	stat -c "first=%u %a %h %F" $f
	forged() { rm -f $f; echo "$key 0" >$f; chmod 600 $f; }
	apply() { err=$("$QOSCTL" apply pip-20pct dev $DEV rate $2 2>&1)
		  echo "$1-rc=$?"; echo "$1-err=$err"; echo "$1-rec=$(cat $f)"; }
	forged; apply used 200mbit
	rm $f; echo "${key/release=/release=0.0-old} 0" >$f; chmod 600 $f
	apply stale 200mbit
	forged; chown $NOBODY $f; apply owner 100mbit
	stat -c "owner-stat=%u %a %h %F" $f
	forged; chmod 0606 $f; apply mode 200mbit
	forged; ln $f /run/hardlink && apply hardlink 100mbit; rm -f /run/hardlink
	rm $f; echo "$key 0" >$TMP/target; ln -s $TMP/target $f; apply symlink 200mbit
	echo "target=$(cat $TMP/target)"; stat -c "symlink-stat=%u %a %h %F" $f
	"$QOSCTL" remove dev $DEV
'

test_kfacts()
{
	local out rec c

	out=$(priv "$KFACTS" 2>&1)
	check_err $? "setup: $out"
	rec=$(field rec "$out")
	[[ "$rec" == "v1 release=$(uname -r) boot=$(cat /proc/sys/kernel/random/boot_id) "*" kinds=htb,fq_codel,prio,tbf "[0-9a-f]* ]]
	check_err $? "first probe recorded '$rec'"
	[ "$(field first "$out")" = "0 600 1 regular file" ]
	check_err $? "record written as '$(field first "$out")', not root's 0600"
	[ "$(field used-rc "$out")" = 1 ] &&
		[[ "$(field used-err "$out")" == *"lacks the HTB qdisc"* ]]
	check_err $? "a record of this kernel saying 'no qdisc' was not used: $(field used-err "$out")"
	for c in stale owner mode hardlink symlink; do
		[ "$(field $c-rc "$out")" = 0 ] && [ "$(field $c-rec "$out")" = "$rec" ]
		check_err $? "$c record: apply exited $(field $c-rc "$out") ($(field $c-err "$out")), record now '$(field $c-rec "$out")'"
	done
	[ "$(field owner-stat "$out")" = "0 600 1 regular file" ] &&
		[ "$(field symlink-stat "$out")" = "0 600 1 regular file" ]
	check_err $? "records replaced as '$(field owner-stat "$out")', '$(field symlink-stat "$out")'"
	[ "$(field target "$out")" = "${rec% *} 0" ]
	check_err $? "the symlink's target was written: '$(field target "$out")'"
	log_test "g. qdisc-probe record: used for this kernel, else probed again and replaced"
}

setup || { echo "setup failed"; exit $ksft_fail; }
ALL_TESTS="test_applied test_not_root_owned test_writable test_symlink test_bpffs_planted
	   test_readonly test_no_bpffs test_kfacts"
tests_run
exit $EXIT_STATUS
