#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make deb` builds the Debian package (dpkg-buildpackage from debian/),
# lintian finds no error in it, and the package, unpacked with dpkg-deb
# into a scratch root, holds every file, names no build path, runs
# `qosctl --version` (the package's version) and `qosctl list`, and
# applies pip-20pct on an interface.
#
# The unpacked qosctl looks for profiles in /etc/qosctl/profiles and
# /usr/share/qosctl/tc-profiles, not under the scratch root: it is pointed
# at the root's copy with QOSCTL_PROFILE_DIR (no chroot).
#
#   $NS: $DEV (veth) --- $PEER
#          ^ qosctl apply pip-20pct, from the package

source "$(dirname "$0")/lib.sh"
require_root
require_cmd make jq
if ! command -v dpkg-buildpackage >/dev/null; then
	echo "SKIP: dpkg-buildpackage is not installed (scripts/install-deps.sh --deb)"
	exit $ksft_skip
fi
# The package does not depend on the kernel; under emulation its build
# would take most of the VM's time for nothing the host has not checked.
if [ "$KSFT_MACHINE_SLOW" = yes ]; then
	echo "SKIP: the package build is checked on the host, not in a slow VM"
	exit $ksft_skip
fi

src=$(readlink -f "$(dirname "$0")/..")
tmp_setup
tmp=$TMP

start=$(date +%s)
make -s -C "$src" deb OUTPUT="$tmp/out" >"$tmp/build.log" 2>&1
check_err $? "make deb failed: $(tail -20 "$tmp/build.log")"
deb=$(ls "$tmp"/out/deb/qosctl_*.deb 2>/dev/null)
[ -f "$deb" ]
check_err $? "no qosctl_*.deb in $tmp/out/deb: $(tail -5 "$tmp/build.log")"
log_setup "make deb: $(basename "$deb") in $(($(date +%s) - start)) s"
root=$tmp/root
dpkg-deb -x "$deb" "$root" || { echo "FAIL: dpkg-deb -x failed"; exit $ksft_fail; }
qosctl=$root/usr/sbin/qosctl
export QOSCTL_PROFILE_DIR=$root/usr/share/qosctl/tc-profiles

lintian_clean()
{
	if command -v lintian >/dev/null; then
		lintian -I --fail-on error "$tmp"/out/deb/qosctl_*.changes >"$tmp/lintian.log" 2>&1
		check_err $? "lintian: $(grep -v 'root privileges' "$tmp/lintian.log")"
		grep -E '^[EWI]: ' "$tmp/lintian.log"
		log_test "lintian: no error"
	else
		log_test_skip "lintian: no error" "lintian is not installed"
	fi
}

contents()
{
	for f in usr/sbin/qosctl usr/share/man/man8/qosctl.8.gz usr/lib/qosctl/qos.bpf.o \
		 lib/systemd/system/qosctl@.service lib/systemd/system/qosctl-exporter.service \
		 lib/systemd/system/qosctl-probe@.service usr/share/doc/qosctl/examples/probe.conf.example \
		 lib/systemd/system/qosctl-reflect.service etc/default/qosctl-reflect \
		 lib/systemd/system/qosctl-agent.service lib/systemd/system/qosctl-balance@.service etc/default/qosctl-agent \
		 etc/default/qosctl-exporter etc/network/if-up.d/qosctl etc/network/if-down.d/qosctl \
		 usr/share/doc/qosctl/copyright usr/share/doc/qosctl/examples/IFACE.conf.example; do
		[ -s "$root/$f" ]
		check_err $? "$f missing from the package"
	done
	for f in "$src"/tc-profiles/*; do
		cmp -s "$f" "$root/usr/share/qosctl/tc-profiles/$(basename "$f")"
		check_err $? "profile $(basename "$f") missing from the package"
	done
	[ ! -f "$src/completion/qosctl.bash" ] || [ -s "$root/usr/share/bash-completion/completions/qosctl" ]
	check_err $? "bash completion missing from the package"
	[ ! -f "$src/completion/_qosctl" ] || [ -s "$root/usr/share/zsh/vendor-completions/_qosctl" ]
	check_err $? "zsh completion missing from the package"
	grep -qx 'ExecStart=/usr/sbin/qosctl apply ${PROFILE} dev %I rate ${RATE} $ARGS' \
		"$root/lib/systemd/system/qosctl@.service"
	check_err $? "the unit does not run /usr/sbin/qosctl"
	[ -z "$(strings "$root/usr/sbin/qosctl" | grep -e "$src" -e "$tmp")" ]
	check_err $? "the packaged binary names a build path"
	log_test "the package holds binary, profiles, man page, units, hooks, examples"
}

packaged_cli()
{
	version=$(dpkg-deb -f "$deb" Version)
	out=$("$qosctl" --version)
	check_err $? "qosctl --version failed"
	[ "$(echo "$out" | awk '{print $2}')" = "${version%%-*}" ]
	check_err $? "qosctl --version says '$out', the package $version"
	list=$("$qosctl" list)
	check_err $? "qosctl list failed"
	for f in "$src"/tc-profiles/*; do
		echo "$list" | grep -qw "$(basename "$f")"
		check_err $? "qosctl list does not show $(basename "$f"): $list"
	done
	log_test "packaged qosctl: --version is $version, list shows every profile"
}

packaged_apply()
{
	setup_ns NS || exit $ksft_fail
	defer_state "$NS"
	DEV=$(ifname_unique qd) PEER=$(ifname_unique qp)
	veth_pair "$NS" "$DEV" "$PEER" || exit $ksft_fail
	in_ns "$NS" "$qosctl" apply pip-20pct dev "$DEV" rate 100mbit >/dev/null
	check_err $? "apply failed"
	[ "$(in_ns "$NS" "$qosctl" show dev "$DEV" -j | jq -r .profile)" = pip-20pct ]
	check_err $? "pip-20pct is not applied"
	in_ns "$NS" "$qosctl" remove dev "$DEV"
	check_err $? "remove failed"
	log_test "packaged qosctl: apply pip-20pct dev $DEV rate 100mbit, remove"
}

ALL_TESTS="lintian_clean contents packaged_cli packaged_apply"
tests_run
exit $EXIT_STATUS
