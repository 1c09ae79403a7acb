#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make install DESTDIR=...` puts the binary, the BPF object, every
# profile, the man page, the systemd units and /etc/default/qosctl-exporter
# where PREFIX and SYSCONFDIR say; the installed binary names no path of
# the source tree, and another PREFIX rebuilds it (and the units) for that
# PREFIX; the installed binary runs and validates the installed profiles;
# systemd-analyze verifies both units and rates them at most 4.0; the
# template's ExecStart/ExecReload/ExecStop, fed a conf file the way
# systemd's EnvironmentFile would, apply, change and remove a profile.
#
# The installed binary looks for profiles under PREFIX, which here is
# inside DESTDIR: it is pointed there with QOSCTL_PROFILE_DIR.
#
#   r: $R_IF2 (veth)  <- the unit's ExecStart, ExecReload and ExecStop

source "$(dirname "$0")/lib.sh"
require_root
require_cmd make systemd-analyze

src=$(readlink -f "$(dirname "$0")/..")
out_dir=$(dirname "$(readlink -f "$QOSCTL")")
dest=$(mktemp -d)
defer rm -rf "$dest"

make -s -C "$src" install OUTPUT="$out_dir" DESTDIR="$dest" PREFIX=/usr/local >"$dest.log" 2>&1
check_err $? "make install failed: $(cat "$dest.log")"
rm -f "$dest.log"
log_setup "make install DESTDIR=... PREFIX=/usr/local"
p=$dest/usr/local
unit=$p/lib/systemd/system/qosctl@.service

installed_files()
{
	for f in sbin/qosctl lib/qosctl/qos.bpf.o share/man/man8/qosctl.8 \
		 lib/systemd/system/qosctl@.service lib/systemd/system/qosctl-exporter.service \
		 lib/systemd/system/qosctl-probe@.service lib/systemd/system/qosctl-reflect.service \
		 lib/systemd/system/qosctl-agent.service lib/systemd/system/qosctl-balance@.service ../../etc/default/qosctl-agent \
		 ../../etc/default/qosctl-reflect share/doc/qosctl/examples/IFACE.conf.example \
		 share/doc/qosctl/examples/probe.conf.example ../../etc/default/qosctl-exporter; do
		[ -s "$p/$f" ]
		check_err $? "$f missing"
	done
	[ -x "$p/sbin/qosctl" ]
	check_err $? "qosctl not executable"
	for f in "$src"/tc-profiles/*; do
		cmp -s "$f" "$p/share/qosctl/tc-profiles/$(basename "$f")"
		check_err $? "profile $(basename "$f") not installed"
	done
	grep -q '^\.TH "\?QOSCTL"\? "\?8' "$p/share/man/man8/qosctl.8"
	check_err $? "the man page has no .TH QOSCTL 8"
	log_test "binary, BPF object, profiles, man page, units and examples installed"
}

no_tree_path()
{
	leak=$(strings "$p/sbin/qosctl" | grep -F "$src")
	[ -z "$leak" ]
	check_err $? "the installed binary names the source tree: $leak"
	strings "$p/sbin/qosctl" | grep -qx /usr/local/share/qosctl/tc-profiles
	check_err $? "the installed binary does not look in /usr/local/share/qosctl/tc-profiles"
	# Found by name, a profile must not come from the tree (it may come from
	# an installed qosctl on this machine).
	out=$("$p/sbin/qosctl" validate pip-20pct 2>&1)
	case $out in "$src"/*) false ;; esac
	check_err $? "the installed binary found a profile in the source tree: $out"
	log_test "the installed binary names no path of the source tree"
}

lists_profiles()
{
	"$p/sbin/qosctl" --version >/dev/null
	check_err $? "the installed binary does not run"
	for f in "$p"/share/qosctl/tc-profiles/*; do
		"$p/sbin/qosctl" validate "$f" rate 1gbit >/dev/null
		check_err $? "installed $(basename "$f") does not validate"
	done
	n=$(QOSCTL_PROFILE_DIR=$p/share/qosctl/tc-profiles "$p/sbin/qosctl" list -j |
		jq '[.profiles[] | select(.path | startswith("'"$p"'/"))] | length')
	[ "$n" -eq "$(ls "$src"/tc-profiles | wc -l)" ]
	check_err $? "qosctl list shows $n profiles"
	log_test "the installed binary validates and lists every installed profile"
}

prefix_rebuild()
{
	# make does not track PREFIX: the paths are stamped into a header, and
	# installing for another PREFIX rebuilds what depends on them. Done in a
	# copy of the output directory (timestamps kept), so that the one the
	# other tests use keeps its PREFIX.
	copy=$(mktemp -d)
	defer rm -rf "$copy"
	cp -a "$out_dir"/bpf "$out_dir"/user "$out_dir"/qos.bpf.o "$out_dir"/qos.skel.h \
		"$out_dir"/libqos.a "$out_dir"/qosctl.8 "$out_dir"/qos_paths.h "$copy"/
	make -s -C "$src" install OUTPUT="$copy" DESTDIR="$copy/root" PREFIX=/usr >"$copy/log" 2>&1
	check_err $? "make install PREFIX=/usr failed: $(cat "$copy/log")"
	strings "$copy/root/usr/sbin/qosctl" | grep -qx /usr/share/qosctl/tc-profiles
	check_err $? "PREFIX=/usr: the binary does not look in /usr/share/qosctl/tc-profiles"
	[ -z "$(strings "$copy/root/usr/sbin/qosctl" | grep -F /usr/local)" ]
	check_err $? "PREFIX=/usr: the binary still names /usr/local"
	grep -q '^ExecStart=/usr/sbin/qosctl ' "$copy/root/usr/lib/systemd/system/qosctl@.service"
	check_err $? "PREFIX=/usr: the unit does not run /usr/sbin/qosctl"
	log_test "make install PREFIX=/usr after PREFIX=/usr/local rebuilds for /usr"
}

units_content()
{
	grep -qx 'ExecStart=/usr/local/sbin/qosctl apply ${PROFILE} dev %I rate ${RATE} $ARGS' "$unit" &&
		grep -qx 'ExecReload=/usr/local/sbin/qosctl apply ${PROFILE} dev %I rate ${RATE} $ARGS' "$unit" &&
		grep -qx 'ExecStop=-/usr/local/sbin/qosctl remove dev %I' "$unit" &&
		grep -qx 'EnvironmentFile=/etc/qosctl/%I.conf' "$unit" &&
		grep -qx 'BindsTo=sys-subsystem-net-devices-%i.device' "$unit" &&
		grep -qx 'WantedBy=sys-subsystem-net-devices-%i.device' "$unit"
	check_err $? "unexpected unit: $(cat "$unit")"
	grep -qx 'ExecStart=/usr/local/sbin/qosctl exporter --listen ${LISTEN} $ARGS' \
		"$p/lib/systemd/system/qosctl-exporter.service" &&
		grep -qx 'LISTEN=127.0.0.1:9464' "$dest/etc/default/qosctl-exporter"
	check_err $? "unexpected exporter unit or /etc/default/qosctl-exporter"
	punit=$p/lib/systemd/system/qosctl-probe@.service
	grep -qx 'ExecStart=/usr/local/sbin/qosctl probe send ${TARGET} $ARGS --continuous --listen ${LISTEN}' \
		"$punit" && grep -qx 'EnvironmentFile=/etc/qosctl/probe-%i.conf' "$punit"
	check_err $? "unexpected probe unit: $(grep -e ^ExecStart -e ^EnvironmentFile "$punit")"
	# The example's ARGS are words probe send takes: every one is checked
	# before --continuous without --listen is refused, and nothing is sent.
	out=$(. "$p/share/doc/qosctl/examples/probe.conf.example" &&
		QOSCTL_PROFILE_DIR=$p/share/qosctl/tc-profiles \
		"$p/sbin/qosctl" probe send "$TARGET" $ARGS --continuous 2>&1)
	[ "$out" = "qosctl: probe send: --continuous and --listen ADDRESS go together" ]
	check_err $? "probe.conf.example: $out"
	runit=$p/lib/systemd/system/qosctl-reflect.service
	grep -qx 'ExecStart=/usr/local/sbin/qosctl probe reflect $ARGS' "$runit" &&
		grep -qx 'EnvironmentFile=-/etc/default/qosctl-reflect' "$runit" &&
		grep -qx 'DynamicUser=yes' "$runit" &&
		grep -qx 'CapabilityBoundingSet=CAP_NET_BIND_SERVICE' "$runit" &&
		grep -qx 'AmbientCapabilities=CAP_NET_BIND_SERVICE' "$runit"
	check_err $? "unexpected reflector unit: $(grep -e ^ExecStart -e ^EnvironmentFile -e Capabilit "$runit")"
	# The commented example's ARGS are words probe reflect takes: all parsed
	# before the bind, which fails on an address this host does not have.
	args=$(sed -n 's/^# ARGS="\(.*\)"$/\1/p' "$dest/etc/default/qosctl-reflect")
	out=$("$p/sbin/qosctl" probe reflect $args listen 192.0.2.1 2>&1)
	[ -n "$args" ] && [ "$out" = "qosctl: probe reflect: listen 192.0.2.1: Cannot assign requested address" ]
	check_err $? "qosctl-reflect's example ARGS '$args': $out"
	log_test "units: conf per %I, bound to the device; exporter on \$LISTEN; probe per conf; reflector"
}

analyze_verify()
{
	# systemd-analyze verify loads the units as systemd would: keys, the
	# executables (here the installed binary under DESTDIR), the man page
	# named in Documentation=. Other units of this machine may warn: only
	# lines about ours count.
	vdir=$dest/verify
	mkdir -p "$vdir"
	for u in qosctl@.service qosctl-exporter.service qosctl-probe@.service qosctl-reflect.service \
		 qosctl-agent.service; do
		sed "s|/usr/local/sbin/qosctl|$p/sbin/qosctl|" "$p/lib/systemd/system/$u" >"$vdir/$u"
	done
	out=$(MANPATH=$p/share/man systemd-analyze verify "$vdir/qosctl@.service" \
		"$vdir/qosctl-exporter.service" "$vdir/qosctl-probe@.service" \
		"$vdir/qosctl-reflect.service" "$vdir/qosctl-agent.service" 2>&1)
	check_err $? "systemd-analyze verify failed: $out"
	[ -z "$(echo "$out" | grep qosctl)" ]
	check_err $? "systemd-analyze verify: $out"
	log_test "systemd-analyze verify: the five units"
}

analyze_security()
{
	# Exposure 4.0 or below ("OK"), for the template's instances and the
	# exporter alike.
	for u in qosctl@eth0.service qosctl-exporter.service qosctl-probe@site1.service \
		 qosctl-reflect.service qosctl-agent.service; do
		out=$(systemd-analyze security --offline=yes --root="$dest" --threshold=40 "$u" 2>&1)
		check_err $? "$u: exposure above 4.0: $(echo "$out" | grep -v '✓')"
		echo "$out" | grep 'Overall exposure'
	done
	log_test "systemd-analyze security: exposure at most 4.0"
}

unit_commands()
{
	# Run the unit's commands as systemd would for instance $R_IF2, with the
	# conf's variables and the installed binary (a '-' prefix, failure
	# ignored, is dropped). selftests/units.sh runs them under systemd itself.
	topo_h1_r_h2 || exit $ksft_fail
	conf=$dest/$R_IF2.conf
	run_unit_line()
	{
		local cmd

		cmd=$(sed -n "s/^$1=-\?//p" "$unit")
		cmd=${cmd//%I/$R_IF2}
		cmd=${cmd//\/usr\/local\/sbin\/qosctl/$p\/sbin\/qosctl}
		(set -a; . "$conf"; QOSCTL_PROFILE_DIR=$p/share/qosctl/tc-profiles; eval in_ns "$R" "$cmd")
	}
	printf 'PROFILE=pip-5pct\nRATE=100mbit\n' >"$conf"
	run_unit_line ExecStart >/dev/null
	check_err $? "ExecStart failed"
	[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r .profile)" = pip-5pct ]
	check_err $? "ExecStart did not apply pip-5pct"
	printf 'PROFILE=pip-20pct\nRATE=100mbit\nARGS="overhead 38 mpu 84"\n' >"$conf"
	run_unit_line ExecReload >/dev/null
	check_err $? "ExecReload failed"
	[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r '"\(.profile) \(.overhead) \(.mpu)"')" = "pip-20pct 38 84" ]
	check_err $? "ExecReload did not apply the changed conf's pip-20pct with ARGS: $(qosctl_ns "$R" show dev "$R_IF2" -j)"
	run_unit_line ExecStop
	check_err $? "ExecStop failed"
	[ -z "$(dev_files "$R" "$R_IF2")" ]
	check_err $? "ExecStop left state behind"
	log_test "the unit's ExecStart, ExecReload and ExecStop apply, change, remove"
}

ALL_TESTS="installed_files no_tree_path lists_profiles prefix_rebuild units_content analyze_verify
	   analyze_security unit_commands"
tests_run
exit $EXIT_STATUS
