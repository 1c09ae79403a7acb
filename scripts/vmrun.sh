#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run one command from the source tree inside a virtme-ng VM booted on a
# packaged kernel: the experiments and benchmarks that need what the build
# machines' kernel lacks (sch_cake, fq_codel, netem, sit).
#
# Usage: scripts/vmrun.sh KERNEL OUTDIR -- COMMAND [ARG...]
#
#   KERNEL   a /boot/vmlinuz-* version prefix ("6.12") or an image path
#   OUTDIR   absolute path, created if needed: the only directory the guest
#            may write (--rwdir); it also receives the guest's dmesg.txt.
#            The console log is OUTDIR.log.
#   COMMAND  run as root in the guest, from the top of the tree, with
#            TMPDIR on a tmpfs and KSFT_MACHINE_SLOW=yes. The environment
#            does not cross into the guest: pass variables with `env`.
#
# Environment: VMRUN_TIMEOUT seconds before the VM is killed (900),
# VMRUN_MEMORY (2G), VMRUN_CPUS (2), VMRUN_MODULES modules loaded before
# COMMAND runs (default: what the experiments use).
#
# Exit status: COMMAND's, 124 if the VM timed out, 130 on Ctrl-C, 255 if
# the VM did not run it. KVM is not available on the build machines, so
# the VM always runs under TCG emulation (10-20x slower). How
# scripts/vmcheck.sh boots its guests is the model (same flags, bpffs,
# TMPDIR on tmpfs because 9p cannot ftruncate() an unlinked file); this
# runner is the generic form, for one command.

set -u
self=$(readlink -f "$0")
top=$(dirname "$(dirname "$self")")

die()
{
	echo "vmrun: $*" >&2
	exit 1
}

# --- guest side: vmrun.sh --guest OUTDIR "MODULES" COMMAND... -------------

if [ "${1:-}" = "--guest" ]; then
	share=$2 mods=$3
	shift 3
	# shellcheck disable=SC2086 # a word list
	modprobe -a $mods 2>/dev/null ||
		for m in $mods; do
			modprobe -q "$m" || echo "vmrun: module $m not loaded"
		done
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf ||
		die "cannot mount bpffs"
	mountpoint -q /run/netns ||
		{ mkdir -p /run/netns && mount -t tmpfs -o mode=0755 tmpfs /run/netns; }
	mkdir -p /run/vmrun-tmp && mount -t tmpfs -o mode=1777 tmpfs /run/vmrun-tmp ||
		die "cannot mount a tmpfs for TMPDIR"
	export TMPDIR=/run/vmrun-tmp KSFT_MACHINE_SLOW=yes
	echo "vmrun: guest kernel $(uname -r), $(nproc) CPUs; running: $*"
	cd "$top" || exit 1
	"$@"
	rc=$?
	dmesg >"$share/dmesg.txt" 2>/dev/null
	exit $rc
fi

# --- host side -------------------------------------------------------------

[ $# -ge 4 ] && [ "$3" = "--" ] ||
	die "usage: $0 KERNEL OUTDIR -- COMMAND [ARG...]"
spec=$1 out=${2%/}
shift 3
case $out in /*) ;; *) die "OUTDIR must be an absolute path (got '$out')" ;; esac

if [ -f "$spec" ]; then
	img=$spec
else
	# The newest /boot/vmlinuz-SPEC[.-+]*: "6.1" must not match 6.12.
	img=$(find /boot -maxdepth 1 -name "vmlinuz-$spec*" | sort -V |
	      grep -E "/vmlinuz-$spec([.+-]|\$)" | tail -n 1)
fi
[ -n "$img" ] && [ -r "$img" ] ||
	die "no readable kernel '$spec' in /boot; scripts/install-deps.sh --vm installs Debian's"
kver=${img##*/vmlinuz-}
[ -d "/lib/modules/$kver" ] || die "/lib/modules/$kver is missing"
command -v vng >/dev/null 2>&1 ||
	die "vng (virtme-ng) is not installed: run scripts/install-deps.sh --vm"

mods=${VMRUN_MODULES:-sch_ingress cls_bpf sch_htb veth cls_u32 act_mirred act_police
	sch_fq_codel sch_cake sch_netem sch_prio sch_tbf sit ip6_tunnel ifb}
mkdir -p "$out" || die "cannot create $out"
log=$out.log
pidfile=$out.vmrun.pid

# timeout leads a process group of its own (vng, qemu): the subshell writes
# its PID, then becomes timeout, so that Ctrl-C can stop that group by id.
# stdin from /dev/null keeps qemu off the terminal; vng's output is piped,
# never redirected to a file (qemu truncates it).
on_signal()
{
	local pg

	trap - INT TERM HUP
	pg=$(cat "$pidfile" 2>/dev/null)
	[ -n "$pg" ] && kill -TERM -- "-$pg" 2>/dev/null
	wait
	rm -f "$pidfile"
	echo "vmrun: interrupted" >&2
	exit 130
}
trap on_signal INT TERM HUP
set -o pipefail
{
	echo "$BASHPID" >"$pidfile"
	exec timeout -k 30 "${VMRUN_TIMEOUT:-900}" \
		vng --run "$img" --disable-kvm --cpus "${VMRUN_CPUS:-2}" \
		    --memory "${VMRUN_MEMORY:-2G}" --name vmrun --cwd "$top" \
		    --rwdir="$out" -- "$self" --guest "$out" "$mods" "$@"
} </dev/null 2>&1 | tee "$log" &
wait $!
rc=$?
rm -f "$pidfile"
case $rc in
124|137) echo "vmrun: $kver: timed out after ${VMRUN_TIMEOUT:-900}s" >&2 ;;
0) ;;
*) echo "vmrun: $kver: exit status $rc" >&2 ;;
esac
exit $rc
