#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install what building, testing and the demo need on Debian 12 (bookworm).
# Idempotent: when every package is already present it only runs dpkg-query
# and returns in well under a second.
#
# Usage: scripts/install-deps.sh [--vm] [--deb]
#   --vm   also install what `make vmcheck` needs (Debian kernels, qemu, virtme-ng)
#   --deb  also install what `make deb` and selftests/deb.sh need
#          (dpkg-buildpackage, debhelper, lintian)

set -euo pipefail

want_vm=0 want_deb=0
for a in "$@"; do
	case $a in
	--vm) want_vm=1 ;;
	--deb) want_deb=1 ;;
	*) echo "usage: $0 [--vm] [--deb]" >&2; exit 2 ;;
	esac
done

# Build: clang/llvm for BPF, bpftool for skeletons, libbpf + libnl-route +
# libinih + json-c for qosctl, the 6.12 source tarball for the kselftest
# harness headers, docutils for the man page, gnuplot for the experiment plots,
# systemd (systemd-analyze, and PID 1 of the units test), ifupdown (ifup and
# ifdown run the hook in a private mount namespace; nothing is configured),
# clang's runtime for libFuzzer (make fuzz).
pkgs=(
	make gcc clang llvm pkg-config libclang-rt-14-dev
	libbpf-dev bpftool libelf-dev zlib1g-dev
	libnl-3-dev libnl-route-3-dev libinih-dev libjson-c-dev libmicrohttpd-dev
	linux-source-6.12 xz-utils
	python3-docutils gnuplot-nox
	iproute2 iputils-ping iperf3 irtt netsniff-ng nftables tcpdump jq procps bc ethtool
	systemd util-linux ifupdown
	python3 python3-prometheus-client
)
vm_pkgs=(
	linux-image-amd64 linux-image-6.12-amd64
	qemu-system-x86 python3-pip busybox-static kmod udev
)
deb_pkgs=(build-essential dpkg-dev debhelper lintian)
[ $want_vm -eq 1 ] && pkgs+=("${vm_pkgs[@]}")
[ $want_deb -eq 1 ] && pkgs+=("${deb_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${st:0:2}" = "ii" ] || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages (${missing[*]}) and not root" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# promtool, for `promtool check metrics` in selftests/prometheus.sh, from
# Debian's prometheus package. Only that binary is taken: installing the
# package would bring a Prometheus server that its postinst starts on a
# machine with systemd, and 100 MB for one check.
if ! command -v promtool >/dev/null 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: promtool missing and not root" >&2
		exit 1
	fi
	echo "install-deps: installing promtool from Debian's prometheus package"
	dl=$(mktemp -d)
	trap 'rm -rf "$dl"' EXIT
	get_prometheus()
	{
		(cd "$dl" && apt-get download -qq -o APT::Sandbox::User=root prometheus)
	}
	get_prometheus || { apt-get update -qq && get_prometheus; }
	dpkg-deb --fsys-tarfile "$dl"/prometheus_*.deb |
		tar -xO ./usr/bin/promtool >/usr/local/bin/promtool.new
	chmod 0755 /usr/local/bin/promtool.new
	mv /usr/local/bin/promtool.new /usr/local/bin/promtool
	promtool --version >/dev/null
fi

if [ $want_vm -eq 1 ] && ! command -v vng >/dev/null 2>&1; then
	echo "install-deps: installing virtme-ng from PyPI"
	pip3 install --quiet --break-system-packages virtme-ng==1.42 2>/dev/null ||
		pip3 install --quiet virtme-ng==1.42
fi

# qosctl itself needs no bpffs; bpftool and the benchmarks look there.
if ! mountpoint -q /sys/fs/bpf 2>/dev/null && [ "$(id -u)" -eq 0 ]; then
	mount -t bpf bpf /sys/fs/bpf
fi
exit 0
