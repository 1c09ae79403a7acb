#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install what building, testing and the demo need on Debian 12 (bookworm)
# or Debian 13 (trixie), the release read from /etc/os-release. On
# bookworm, libbpf-dev and bpftool come from bookworm-backports (libbpf
# 1.4: the tcx attach API; Debian 12's own 1.1 has none), from the
# mirror bookworm itself comes from. Idempotent: when every package is already present it only runs dpkg-query
# and returns in well under a second.
#
# Usage: scripts/install-deps.sh [--vm] [--deb] [--build]
#   --vm   also install what `make vmcheck` needs (Debian kernels, qemu, virtme-ng)
#   --deb  also install what `make deb` and selftests/deb.sh need
#          (dpkg-buildpackage, debhelper, lintian)
#   --build  only what `make`, the C unit suites and `make deb` need, not
#            the network suites' tools (scripts/trixie-check.sh)

set -euo pipefail

# shellcheck source=/dev/null
. /etc/os-release
case ${ID:-}-${VERSION_CODENAME:-} in
debian-bookworm)
	fuzz_rt=libclang-rt-14-dev backports=bookworm-backports promtool=prometheus
	systemd_pc=systemd ;;
debian-trixie)
	fuzz_rt=libclang-rt-19-dev backports= promtool=promtool systemd_pc=systemd-dev ;;
*)
	echo "install-deps: ${PRETTY_NAME:-this system} is not supported:" \
	     "Debian 12 (bookworm) and 13 (trixie) are (README.md)" >&2
	exit 1 ;;
esac

want_vm=0 want_deb=0 want_tests=1
for a in "$@"; do
	case $a in
	--vm) want_vm=1 ;;
	--deb) want_deb=1 ;;
	--build) want_tests=0 ;;
	*) echo "usage: $0 [--vm] [--deb] [--build]" >&2; exit 2 ;;
	esac
done

# Build: clang/llvm for BPF, bpftool for skeletons, libbpf + libnl-route +
# libinih + json-c + libcurl (etcd's JSON gateway) for qosctl, the 6.12 source tarball for the kselftest
# harness headers, docutils for the man page, gnuplot for the experiment plots,
# systemd (systemd-analyze, and PID 1 of the units test), ifupdown (ifup and
# ifdown run the hook in a private mount namespace; nothing is configured),
# clang's runtime for libFuzzer (make fuzz), named after clang's version.
pkgs=(
	make gcc clang llvm pkg-config "$fuzz_rt"
	libbpf-dev bpftool libelf-dev zlib1g-dev
	libnl-3-dev libnl-route-3-dev libinih-dev libjson-c-dev libmicrohttpd-dev
	libcurl4-openssl-dev
	linux-source-6.12 xz-utils
	python3-docutils "$systemd_pc"
)
test_pkgs=(
	gnuplot-nox
	iproute2 iputils-ping iperf3 irtt netsniff-ng nftables tcpdump jq procps bc ethtool
	systemd util-linux ifupdown
	python3 python3-prometheus-client
	etcd-server etcd-client
)
vm_pkgs=(
	linux-image-amd64 linux-image-6.12-amd64
	qemu-system-x86 python3-pip busybox-static kmod udev
)
deb_pkgs=(build-essential dpkg-dev debhelper lintian)
[ $want_tests -eq 1 ] && pkgs+=("${test_pkgs[@]}")
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

# bookworm's libbpf 1.1 and bpftool 7.1 replaced by bookworm-backports'
# (libbpf >= 1.3 for bpf_prog_attach_opts' relative_fd and
# expected_revision); the suite is added with bookworm's own mirror.
backports()
{
	local src=/etc/apt/sources.list.d/qosctl-$backports.sources uri

	uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
	[ -e "$src" ] || printf '%s\n' 'Types: deb' "URIs: ${uri:-http://deb.debian.org/debian}" \
		"Suites: $backports" 'Components: main' \
		'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' >"$src"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-t "$backports" libbpf-dev bpftool >/dev/null
}
if [ -n "$backports" ] &&
   dpkg --compare-versions "$(dpkg-query -W -f='${Version}' libbpf-dev)" lt 1:1.3; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: libbpf-dev older than 1.3 and not root" >&2
		exit 1
	fi
	echo "install-deps: installing libbpf-dev and bpftool from $backports"
	backports
fi

# promtool, for `promtool check metrics` in selftests/prometheus.sh, from
# Debian's prometheus package (its own promtool package on trixie). Only
# that binary is taken: installing bookworm's package would bring a
# Prometheus server that its postinst starts on a machine with systemd,
# and 100 MB for one check.
if [ $want_tests -eq 1 ] && ! command -v promtool >/dev/null 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: promtool missing and not root" >&2
		exit 1
	fi
	echo "install-deps: installing promtool from Debian's $promtool package"
	dl=$(mktemp -d)
	trap 'rm -rf "$dl"' EXIT
	get_prometheus()
	{
		(cd "$dl" && apt-get download -qq -o APT::Sandbox::User=root "$promtool")
	}
	get_prometheus || { apt-get update -qq && get_prometheus; }
	dpkg-deb --fsys-tarfile "$dl/$promtool"_*.deb |
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
