#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The shape of the code, checked on every `make check` before anything is
# built (Documentation/design.rst, "Userspace layers"):
#
#   - no function in user/ or bpf/ over 80 lines. A function, kernel style,
#     starts at a line with a type at column 0 whose header ends in ')' on
#     the line before a lone '{', and ends at the first '}' at column 0; its
#     length counts both ends.
#   - no #include from one user/ folder into another that the layer table
#     does not allow. The table is an order, so no circle between folders
#     can pass; header files are also checked for include circles among
#     themselves (tsort).
#
# Each finding is printed as FILE:LINE: what, and the script exits 1. The
# allow-list (scripts/shape-allow.txt; another with -a FILE) names findings
# known and left for later, one a line:
#
#   length FILE FUNCTION     FUNCTION of FILE may be over 80 lines
#   layer FILE FOLDER        FILE may include FOLDER/...
#
# An entry that no longer matches anything is reported as stale, without
# failing, so that the list only shrinks.
#
# Usage: scripts/check-shape.sh [-a ALLOW_FILE] [TOP]

set -u

MAX_LINES=80
top=$(cd "$(dirname "$0")/.." && pwd)
allow=
while getopts a: o; do
	case $o in
	a) allow=$OPTARG ;;
	*) echo "usage: $0 [-a ALLOW_FILE] [TOP]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] && top=$1
cd "$top" || exit 2
[ -n "$allow" ] || allow=scripts/shape-allow.txt
[ -e "$allow" ] || allow=/dev/null

# What each user/ folder may include besides itself (design.rst's table):
# cli <- out <- domain <- txn <- kernel <- model <- lib, and probe on lib
# alone.
declare -A may=(
	[cli]="out domain txn kernel probe model lib"
	[out]="domain txn kernel model lib"
	[domain]="txn kernel model lib"
	[txn]="kernel model lib"
	[kernel]="model lib"
	[probe]="lib"
	[model]="lib"
	[lib]=""
)

findings=$(mktemp)
trap 'rm -f "$findings"' EXIT

# "length FILE FUNCTION LINE N" for each function over MAX_LINES.
find user bpf -name '*.[ch]' | sort | while read -r f; do
	awk -v f="$f" -v max="$MAX_LINES" '
		/^[A-Za-z_]/ { start = FNR; head = $0 }
		/^\{/ && prev ~ /\)[ \t]*$/ && start {
			in_fn = 1; fn_start = start; fn_head = head
		}
		/^\}/ && in_fn {
			n = FNR - fn_start + 1
			if (n > max) {
				name = fn_head
				sub(/\(.*/, "", name)
				sub(/.*[ \t*]/, "", name)
				print "length", f, name, fn_start, n
			}
			in_fn = 0
		}
		{ prev = $0 }
	' "$f"
done >>"$findings"

# "layer FILE FOLDER LINE" for each include the table does not allow.
for d in "${!may[@]}"; do
	[ -d "user/$d" ] || continue
	for f in user/"$d"/*.[ch]; do
		grep -n '^#include "[a-z]*/' "$f" | while IFS=: read -r line text; do
			to=${text#*\"}
			to=${to%%/*}
			[ "$to" = "$d" ] && continue
			[ -n "${may[$to]+x}" ] || continue	# ../bpf/, generated headers
			case " ${may[$d]} " in
			*" $to "*) ;;
			*) echo "layer $f $to $line" ;;
			esac
		done
	done
done >>"$findings"

status=0
allowed=0
while read -r kind f what line n; do
	if grep -qx "$kind $f $what" <(sed -e 's/#.*//' -e 's/[ \t]*$//' "$allow"); then
		allowed=$((allowed + 1))
		continue
	fi
	status=1
	case $kind in
	length) echo "$f:$line: $what() is $n lines, more than $MAX_LINES" ;;
	layer)
		from=$(basename "$(dirname "$f")")
		echo "$f:$line: includes $what/, which the layer table keeps from $from/" \
		     "($from/ may include: ${may[$from]:-no other folder})" ;;
	esac
done <"$findings"

# Include circles among headers: every edge "includer included", by path.
edges=$(for h in $(find user -name '*.h' | sort); do
	grep -o '^#include "[a-z_]*/[a-z_]*\.h"' "$h" | sed 's/^#include "\(.*\)"/\1/' |
		while read -r to; do
			[ -e "user/$to" ] && echo "$h user/$to"
		done
done)
if [ -n "$edges" ] && ! loop=$(echo "$edges" | tsort 2>&1 >/dev/null) ; then
	echo "include circle among headers:"
	echo "$loop" | grep -v 'input contains a loop' | sed 's/^tsort: /  /'
	status=1
fi

# Entries of the allow-list that match nothing any more.
sed -e 's/#.*//' -e 's/[ \t]*$//' -e '/^$/d' "$allow" | while read -r kind f what; do
	grep -q "^$kind $f $what " "$findings" ||
		echo "$allow: stale (fixed, remove it): $kind $f $what" >&2
done

[ "$allowed" -gt 0 ] && echo "check-shape: $allowed known finding(s) allowed by $allow" >&2
[ $status = 0 ] && echo "check-shape: ok"
exit $status
