#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build and unit-test qosctl on Debian 13 (trixie) from this Debian 12
# machine: a minbase trixie from Debian's archive (debootstrap), kept in
# the build output so that a second run starts at the build, then
# scripts/install-deps.sh --build --deb, `make`, the C unit suites and
# `make deb` inside it, as root. The network suites stay on the host: the chroot
# shares its kernel.
#
# Usage: scripts/trixie-check.sh OUTPUT_DIR
#   OUTPUT_DIR/trixie/root   the chroot (reused when complete)
#   OUTPUT_DIR/trixie/out    the chroot's build output (/out inside)
#
# Environment: TRIXIE_MIRROR (default http://deb.debian.org/debian).
# Every mount this script makes is undone on every exit path, by its mount
# point.

set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 OUTPUT_DIR" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "trixie-check: needs root (debootstrap, chroot)" >&2; exit 1; }

src=$(readlink -f "$(dirname "$0")/..")
base=$(readlink -f "$1")/trixie
root=$base/root
out=$base/out
mirror=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
mounted=()

cleanup()
{
	local i

	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R "${mounted[i]}" 2>/dev/null || umount -lR "${mounted[i]}" || true
	done
}
trap cleanup EXIT

bind()
{
	mkdir -p "$2"
	mount "${@:3}" "$1" "$2"
	mounted+=("$2")
	mount --make-rslave "$2"
}

# step NAME CMD...: run CMD, then say how long NAME took.
step()
{
	local t0=$SECONDS name=$1

	shift
	"$@"
	echo "trixie-check: $name: $((SECONDS - t0)) s"
}

# The stamp is written last: a debootstrap cut short is made anew.
bootstrap()
{
	[ -e "$root/.qosctl-complete" ] && return 0
	command -v debootstrap >/dev/null || {
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
	}
	rm -rf "$root"
	mkdir -p "$root"
	debootstrap --variant=minbase trixie "$root" "$mirror" >"$base/debootstrap.log" 2>&1 ||
		{ tail -20 "$base/debootstrap.log" >&2; return 1; }
	touch "$root/.qosctl-complete"
}

in_root()
{
	chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		bash -c "$1"
}

mkdir -p "$base" "$out"
start=$SECONDS
step debootstrap bootstrap
cp /etc/resolv.conf "$root/etc/resolv.conf"
bind /proc "$root/proc" --rbind
bind /sys "$root/sys" --rbind
bind /dev "$root/dev" --rbind
# The tree read-only: the build writes only to /out.
bind "$src" "$root/src" --bind
mount -o remount,bind,ro "$root/src"
bind "$out" "$root/out" --bind

# etcd-server and etcd-client too: test_etcd runs against trixie's etcd 3.5, whose JSON
# gateway (grpc-gateway v2) words its errors unlike 3.4's.
step install-deps in_root 'grep PRETTY_NAME /etc/os-release && /src/scripts/install-deps.sh --build --deb &&
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-server etcd-client >/dev/null'
step make in_root 'make -s -C /src -j"$(nproc)" OUTPUT=/out all'
# The C suites: crafted packets through BPF_PROG_TEST_RUN and plain
# arithmetic, no network namespace.
step unit-tests in_root 'set -e; for t in /out/selftests/test_*; do
	[ -x "$t" ] || continue
	echo "# $t"; "$t"
done'
step make-deb in_root 'make -s -C /src OUTPUT=/out deb && dpkg-deb -f /out/deb/qosctl_*.deb Depends &&
	lintian -I --fail-on error /out/deb/qosctl_*.changes'
echo "trixie-check: ok in $((SECONDS - start)) s"
