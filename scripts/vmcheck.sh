#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run the selftests (the run_tests recipe of selftests/Makefile, as
# `make check` does) inside virtme-ng VMs booted on Debian's packaged kernels.
#
# Usage: scripts/vmcheck.sh OUTPUT_DIR [KERNEL...]
#
#   OUTPUT_DIR  absolute path of an already built output directory
#               (`make OUTPUT=...`): qosctl, libqos.a, selftests/
#   KERNEL      a version prefix ("6.1", "6.12", "6.1.0-56-amd64") matched
#               against /boot/vmlinuz-*, or the path of a kernel image;
#               default: Debian's 6.1 kernel
#
# Environment:
#   VMCHECK_TIMEOUT  seconds one VM may run before it is killed (default 2700)
#   VMCHECK_MEMORY   guest memory (default 2G)
#   VMCHECK_CPUS     guest CPUs (default 2)
#   VMCHECK_SUITE    vm (default): the suites whose outcome depends on the
#                    kernel (VM_TEST_PROGS in selftests/Makefile), or all
#
# KVM is not available on the build machines: the VMs run under TCG
# emulation, so the guest exports KSFT_MACHINE_SLOW=yes. The host
# filesystem is the guest's read-only root; only $OUTPUT_DIR/vmcheck/<kver>/
# is shared writable (--rwdir). It receives the guest's kernel log
# (dmesg.txt) and whatever the tests leave in their TMPDIR (tmp/).
# TMPDIR itself is a tmpfs in the guest, not the shared directory: 9p
# cannot ftruncate() an open, unlinked file, which is how iperf3 makes
# its buffers ("unable to create a new stream: No such file or directory").
# The console log of each VM is kept in $OUTPUT_DIR/vmcheck/<kver>.log.
#
# The exit status is the first non-zero status of the kernels, in the order
# given (that of the test runner, 124 if a VM timed out, 255 if it crashed),
# or 0 if every kernel passed.
#
# The same script runs inside the guest as `vmcheck.sh --guest OUTPUT_DIR
# SHARED_DIR SUITE`: it loads modules, mounts bpffs, checks network namespaces,
# then runs the tests.

set -u

self=$(readlink -f "$0")
top=$(dirname "$(dirname "$self")")

# Loaded before the tests so that feature probes see them (the kernel would
# also autoload most on first use). The first list is what the selftests
# require (selftests/config), the second what they use where present.
req_mods=(sch_ingress cls_bpf sch_htb veth 8021q)
opt_mods=(sch_prio sch_fq_codel sch_tbf sch_fq sch_sfq sch_netem
	  act_police act_gact act_mirred act_skbedit
	  cls_u32 cls_fw cls_flower cls_matchall
	  sit ip6_tunnel ifb dummy macvlan tun
	  nf_tables xt_CLASSIFY xt_DSCP)

die()
{
	echo "vmcheck: $*" >&2
	exit 1
}

# --- guest side ------------------------------------------------------------

guest_setup()
{
	local m missing=() ns

	for m in "${req_mods[@]}"; do
		modprobe -q "$m" || missing+=("$m")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "vmcheck: required modules failed to load: ${missing[*]}"
		echo "vmcheck: (the tests that need them will fail)"
	fi
	missing=()
	for m in "${opt_mods[@]}"; do
		modprobe -q "$m" || missing+=("$m")
	done
	[ ${#missing[@]} -gt 0 ] &&
		echo "vmcheck: optional modules not available: ${missing[*]}"

	if ! mountpoint -q /sys/fs/bpf; then
		mount -t bpf bpf /sys/fs/bpf || {
			echo "vmcheck: cannot mount bpffs on /sys/fs/bpf"
			return 1
		}
	fi

	# ip netns keeps its bind mounts under /run/netns; /run is a tmpfs
	# in virtme-ng, but check rather than assume.
	ns="vmcheck-probe-$$"
	if ! ip netns add "$ns" 2>/dev/null; then
		mkdir -p /run/netns &&
			mount -t tmpfs -o mode=0755 tmpfs /run/netns
		ip netns add "$ns" || {
			echo "vmcheck: ip netns add does not work in the guest"
			return 1
		}
	fi
	ip netns del "$ns"
	return 0
}

guest_main()
{
	local out=$1 share=$2 suite=$3 tmp=/run/vmcheck-tmp cmd rc splat

	echo "vmcheck: guest kernel $(uname -r), $(nproc) CPUs," \
	     "$(awk '/^MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB"
	guest_setup || exit 1

	mkdir -p "$tmp" && mount -t tmpfs -o mode=1777 tmpfs "$tmp" || exit 1
	export TMPDIR=$tmp
	export KSFT_MACHINE_SLOW=yes
	cd "$top" || exit 1

	# The run_tests recipe exactly as `make check` runs it, but executed
	# here rather than by make, so that the runner's exit status (ksft:
	# 1 on failure) comes through instead of make's 2. The host checked
	# that the build is current, so the recipe is all make would run.
	cmd=$(make -n -s --no-print-directory -C selftests run_tests \
		OUTPUT="$out/selftests" TOP_OUTPUT="$out" SUITE="$suite") || exit 1
	case $cmd in
	*run_tests.sh*) ;;
	*) echo "vmcheck: unexpected run_tests recipe: $cmd"; exit 1 ;;
	esac
	echo "vmcheck: (cd selftests && $cmd)"
	(cd selftests && bash -c "$cmd")
	rc=$?

	dmesg >"$share/dmesg.txt"
	[ -n "$(ls -A "$tmp")" ] && cp -a "$tmp" "$share/tmp"

	# A kernel warning during the tests is worth seeing even if they pass.
	splat='BUG:|WARNING:|Oops|general protection|Call Trace'
	if dmesg | grep -qE "$splat"; then
		echo "vmcheck: kernel warnings in the guest's log:"
		dmesg | grep -E -A 20 "$splat" |
			sed 's/^/vmcheck: dmesg: /' | head -n 200
	fi
	exit $rc
}

if [ "${1:-}" = "--guest" ]; then
	[ $# -eq 4 ] || die "usage: $0 --guest OUTPUT_DIR SHARED_DIR SUITE"
	guest_main "$2" "$3" "$4"
fi

# --- host side -------------------------------------------------------------

usage()
{
	echo "usage: $0 OUTPUT_DIR [KERNEL...]" >&2
	echo "  KERNEL: version prefix of a /boot/vmlinuz-* (6.1, 6.12) or an image path" >&2
	exit 1
}

# resolve_kernel SPEC: print the /boot/vmlinuz-* image SPEC names; the
# newest if several match ("6.1" matches 6.1.0-56-amd64, not 6.12.x).
resolve_kernel()
{
	local spec=$1 img ver best=

	if [ -f "$spec" ]; then
		echo "$spec"
		return 0
	fi
	for img in /boot/vmlinuz-"$spec"*; do
		[ -f "$img" ] || continue
		ver=${img#/boot/vmlinuz-}
		case $ver in
		"$spec" | "$spec".* | "$spec"-* | "$spec"+*) ;;
		*) continue ;;
		esac
		best=$(printf '%s\n%s\n' "$best" "$img" | sed '/^$/d' | sort -V | tail -n 1)
	done
	[ -n "$best" ] || return 1
	echo "$best"
}

# run_kernel IMG: boot IMG, run the tests, record status, time and summary.
run_kernel()
{
	local img=$1 kver dir log start rc secs summary

	kver=$(basename "$img")
	kver=${kver#vmlinuz-}
	dir=$out/vmcheck/$kver
	log=$out/vmcheck/$kver.log

	echo "========================================================================"
	echo "vmcheck: kernel $kver ($img)"
	echo "vmcheck: log $log"
	echo "========================================================================"

	rm -rf "$dir"
	mkdir -p "$dir" || die "cannot create $dir"

	start=$(date +%s)
	# timeout puts itself, vng and qemu in a process group of their own,
	# whose id (timeout's PID) on_signal() needs: the subshell records
	# its PID and becomes timeout. stdin from /dev/null: vng then leaves
	# the terminal alone, and qemu, outside the terminal's foreground
	# group, is not stopped by SIGTTIN/SIGTTOU. The pipeline runs in the
	# background so that a signal interrupts `wait`; with pipefail its
	# status is timeout's (tee does not fail).
	rm -f "$vm_pidfile"
	vm_running=1
	{
		echo "$BASHPID" >"$vm_pidfile"
		exec timeout -k 30 "$vm_timeout" \
			vng --run "$img" --disable-kvm --cpus "$vm_cpus" \
			    --memory "$vm_memory" --name vmcheck --cwd "$top" \
			    --rwdir="$dir" -- "$self" --guest "$out" "$dir" "$vm_suite"
	} </dev/null 2>&1 | tee "$log" &
	wait $!
	rc=$?
	vm_running=
	rm -f "$vm_pidfile"
	secs=$(( $(date +%s) - start ))

	summary=$(grep -aE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -n 1)
	case $rc in
	0)	summary="PASS ${summary:-?}" ;;
	124|137) summary="FAIL timeout after ${vm_timeout}s${summary:+ ($summary)}" ;;
	255)	summary="FAIL VM crashed or did not run the tests (exit 255)${summary:+ ($summary)}" ;;
	*)	summary="FAIL exit=$rc${summary:+ ($summary)}" ;;
	esac
	echo "vmcheck: $kver: $summary, ${secs}s"
	results+=("$(printf '%-24s %s, %ss' "$kver" "$summary" "$secs")")
	[ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
}

# Ctrl-C reaches this script and tee, not the VM: stop the VM's process
# group (ours, by id) rather than leave qemu running until the timeout.
# shellcheck disable=SC2317 # called from the trap
on_signal()
{
	local pgid

	trap - INT TERM HUP
	if [ -n "$vm_running" ]; then
		pgid=$(cat "$vm_pidfile" 2>/dev/null)
		if [ -n "$pgid" ]; then
			kill -TERM -- "-$pgid" 2>/dev/null || kill -TERM "$pgid" 2>/dev/null
		fi
		wait
		rm -f "$vm_pidfile"
	fi
	echo "vmcheck: interrupted" >&2
	exit 130
}

[ $# -ge 1 ] || usage
case $1 in -h|--help) usage ;; esac
out=$1
shift
case $out in /*) ;; *) die "OUTPUT_DIR must be an absolute path (got '$out')" ;; esac
out=${out%/}

vm_timeout=${VMCHECK_TIMEOUT:-2700}
vm_memory=${VMCHECK_MEMORY:-2G}
vm_cpus=${VMCHECK_CPUS:-2}
vm_suite=${VMCHECK_SUITE:-vm}
case $vm_suite in vm|all) ;; *) die "VMCHECK_SUITE must be vm or all, not '$vm_suite'" ;; esac

command -v vng >/dev/null 2>&1 ||
	die "vng (virtme-ng) is not installed: run scripts/install-deps.sh --vm"
command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	die "qemu-system-x86_64 is not installed: run scripts/install-deps.sh --vm"
[ -x "$out/qosctl" ] ||
	die "$out/qosctl does not exist: build first (make OUTPUT=$out)"
# The guest sees the tree read-only: a stale build could not be rebuilt there.
if ! make -q -C "$top" OUTPUT="$out" "$out/qosctl" >/dev/null 2>&1 ||
   ! make -q -C "$top/selftests" OUTPUT="$out/selftests" TOP_OUTPUT="$out" all >/dev/null 2>&1; then
	die "$out is not built or out of date: run make OUTPUT=$out first"
fi

[ $# -gt 0 ] || set -- 6.1
imgs=()
for k in "$@"; do
	img=$(resolve_kernel "$k") ||
		die "no kernel matching '$k' in /boot (installed:" \
		    "$(cd /boot && echo vmlinuz-* | sed 's/vmlinuz-//g'));" \
		    "scripts/install-deps.sh --vm installs linux-image-amd64 and linux-image-6.12-amd64"
	[ -r "$img" ] || die "$img is not readable (run as root)"
	kver=$(basename "$img")
	kver=${kver#vmlinuz-}
	[ -d "/lib/modules/$kver" ] ||
		die "/lib/modules/$kver is missing: the guest would have no modules for $img"
	imgs+=("$img")
done

mkdir -p "$out/vmcheck" || die "cannot create $out/vmcheck"
status=0
results=()
vm_running=
vm_pidfile=$out/vmcheck/vm.pid
set -o pipefail
trap on_signal INT TERM HUP
for img in "${imgs[@]}"; do
	run_kernel "$img"
done

echo "========================================================================"
for r in "${results[@]}"; do
	echo "vmcheck: $r"
done
exit "$status"
