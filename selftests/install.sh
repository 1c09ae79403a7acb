#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make install DESTDIR=...` puts the binary, the BPF object, every
# profile, the man page and the systemd unit where PREFIX says; the
# installed binary names no path of the source tree, and another PREFIX
# rebuilds it (and the unit) for that PREFIX; the installed binary runs
# and validates the installed profiles; the unit's ExecStart/ExecStop, fed
# a conf file the way systemd's EnvironmentFile would, apply and remove a
# profile on an interface.
#
# The installed binary looks for profiles under PREFIX, which here is
# inside DESTDIR: it is pointed there with QOSCTL_PROFILE_DIR.
#
#   r: $R_IF2 (veth)  <- the unit's ExecStart and ExecStop

source "$(dirname "$0")/lib.sh"
require_root
require_cmd make

src=$(readlink -f "$(dirname "$0")/..")
out_dir=$(dirname "$(readlink -f "$QOSCTL")")
dest=$(mktemp -d)
defer rm -rf "$dest"

make -s -C "$src" install OUTPUT="$out_dir" DESTDIR="$dest" PREFIX=/usr/local >"$dest.log" 2>&1
check_err $? "make install failed: $(cat "$dest.log")"
rm -f "$dest.log"
log_test "make install DESTDIR=... PREFIX=/usr/local"

p=$dest/usr/local
for f in sbin/qosctl lib/qosctl/qos.bpf.o share/man/man8/qosctl.8 \
	 lib/systemd/system/qosctl@.service share/doc/qosctl/examples/IFACE.conf.example; do
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
log_test "binary, BPF object, profiles, man page, unit and example installed"

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

"$p/sbin/qosctl" --version >/dev/null
check_err $? "the installed binary does not run"
for f in "$p"/share/qosctl/tc-profiles/*; do
	"$p/sbin/qosctl" validate "$f" rate 1gbit >/dev/null
	check_err $? "installed $(basename "$f") does not validate"
done
n=$(QOSCTL_PROFILE_DIR=$p/share/qosctl/tc-profiles "$p/sbin/qosctl" list | wc -l)
[ "$n" -eq "$(ls "$src"/tc-profiles | wc -l)" ]
check_err $? "qosctl list shows $n profiles"
log_test "the installed binary validates and lists every installed profile"

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

unit=$p/lib/systemd/system/qosctl@.service
grep -qx 'ExecStart=/usr/local/sbin/qosctl apply ${PROFILE} dev %i rate ${RATE}' "$unit" &&
	grep -qx 'ExecStop=/usr/local/sbin/qosctl remove dev %i' "$unit" &&
	grep -qx 'EnvironmentFile=/etc/qosctl/%i.conf' "$unit"
check_err $? "unexpected unit: $(cat "$unit")"
log_test "qosctl@.service applies /etc/qosctl/%i.conf and removes on stop"

# Run the unit's commands as systemd would for instance $R_IF2, with the
# conf's variables and the installed binary.
topo_h1_r_h2 || exit $ksft_fail
conf=$dest/$R_IF2.conf
printf 'PROFILE=pip-5pct\nRATE=100mbit\n' >"$conf"
run_unit_line()
{
	local cmd

	cmd=$(sed -n "s/^$1=//p" "$unit")
	cmd=${cmd//%i/$R_IF2}
	cmd=${cmd//\/usr\/local\/sbin\/qosctl/$p\/sbin\/qosctl}
	(set -a; . "$conf"; QOSCTL_PROFILE_DIR=$p/share/qosctl/tc-profiles; eval in_ns "$R" "$cmd")
}
run_unit_line ExecStart >/dev/null
check_err $? "ExecStart failed"
[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r .profile)" = pip-5pct ]
check_err $? "ExecStart did not apply pip-5pct"
run_unit_line ExecStop
check_err $? "ExecStop failed"
[ -z "$(dev_files "$R" "$R_IF2")" ]
check_err $? "ExecStop left state behind"
log_test "the unit's ExecStart and ExecStop apply and remove the conf's profile"
exit $EXIT_STATUS
