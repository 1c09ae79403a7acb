#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Print the Debian packages missing for a build, on one line, or nothing.
# The Makefile runs it before building, so that a fresh machine stops with
# that line (and a pointer to scripts/install-deps.sh) instead of the first
# compiler error. Probes, not package queries: a tool or library installed
# another way counts.
#
# Usage: scripts/check-deps.sh [--selftests]
#   --selftests  also what the C selftests need (the kernel source tarball)
#
# Environment: CC CLANG BPFTOOL RST2MAN PKG_CONFIG (as make passes them),
# KSRC_TAR (the tarball the Makefile found, empty if none).

missing=

need_cmd()
{
	command -v "$1" >/dev/null 2>&1 || missing="$missing $2"
}

need_cmd "${CC:-cc}" gcc
need_cmd "${CLANG:-clang}" clang
need_cmd "${BPFTOOL:-bpftool}" bpftool
need_cmd "${RST2MAN:-rst2man}" python3-docutils
if command -v "${PKG_CONFIG:-pkg-config}" >/dev/null 2>&1; then
	for m in libbpf:libbpf-dev libnl-3.0:libnl-3-dev libnl-route-3.0:libnl-route-3-dev \
		 inih:libinih-dev json-c:libjson-c-dev libmicrohttpd:libmicrohttpd-dev \
		 libcurl:libcurl4-openssl-dev; do
		"${PKG_CONFIG:-pkg-config}" --exists "${m%%:*}" || missing="$missing ${m#*:}"
	done
else
	missing="$missing pkg-config"
fi
if [ "${1:-}" = --selftests ]; then
	[ -n "${KSRC_TAR:-}" ] || missing="$missing linux-source-6.12"
	need_cmd xz xz-utils
fi
echo $missing
