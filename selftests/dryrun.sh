#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `apply --dry-run` changes nothing, and what it prints is what apply then
# installs: every qdisc (kind, handle, parent, limit) and every HTB class
# (parent, rate, ceil, prio, burst) of the plan is compared with what the
# kernel reports afterwards (tc -j qdisc show; tc class show, whose HTB
# output iproute2 6.1 does not give as JSON). Bursts may differ by the
# kernel's rounding to scheduler ticks (1%); rates must match exactly.
#
#   r: $R_IF2 (veth)  <- each profile that this kernel can build, 100mbit

source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq tc python3

topo_h1_r_h2 || exit $ksft_fail
tmp_setup
tmp=$TMP

compare()
{
	python3 - "$tmp/plan" "$tmp/qdisc.json" "$tmp/class.txt" <<'EOT'
import json, re, sys

plan = open(sys.argv[1]).read().splitlines()
qdiscs = {q["handle"]: q for q in json.load(open(sys.argv[2]))}
classes = {}
for line in open(sys.argv[3]):
    w = line.split()
    if len(w) > 2 and w[0] == "class":
        c = {k: w[i + 1] for i, k in enumerate(w[:-1])
             if k in ("parent", "prio", "rate", "ceil", "burst", "cburst")}
        classes[w[2]] = c | {"kind": w[1], "parent": c.get("parent", "root")}

units = {"bit": 1, "Kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9}
def rate(s):
    m = re.fullmatch(r"([\d.]+)(\w+)", s)
    return float(m.group(1)) * units[m.group(2)]
def size(s):
    m = re.fullmatch(r"([\d.]+)(b|Kb|Mb)", s)
    return float(m.group(1)) * {"b": 1, "Kb": 1024, "Mb": 1048576}[m.group(2)]

bad = []
for line in plan:
    w = line.split()
    if w[:3] == ["tc", "qdisc", "replace"]:
        o = {k: w[i + 1] for i, k in enumerate(w[:-1])
             if k in ("handle", "parent", "limit", "rate", "burst")}
        kind = w[w.index("handle") + 2]
        q = qdiscs.get(o["handle"])
        if not q or q["kind"] != kind:
            bad.append(f"qdisc {o['handle']} {kind}: kernel has {q and q['kind']}")
            continue
        if "root" in w[3:5] and not q.get("root"):
            bad.append(f"qdisc {o['handle']}: not root")
        if "parent" in o and q.get("parent") != o["parent"]:
            bad.append(f"qdisc {o['handle']}: parent {q.get('parent')} != {o['parent']}")
        if "limit" in o and kind in ("pfifo", "bfifo"):
            if q["options"]["limit"] != int(o["limit"].rstrip("b")):
                bad.append(f"qdisc {o['handle']}: limit {q['options']['limit']} != {o['limit']}")
        if kind == "tbf":
            if q["options"]["rate"] * 8 != int(o["rate"].rstrip("bit")):
                bad.append(f"tbf {o['handle']}: rate {q['options']['rate'] * 8} != {o['rate']}")
            if abs(q["options"]["burst"] - int(o["burst"][:-1])) > int(o["burst"][:-1]) / 100:
                bad.append(f"tbf {o['handle']}: burst {q['options']['burst']} != {o['burst']}")
    elif w[:3] == ["tc", "class", "replace"]:
        o = {k: w[i + 1] for i, k in enumerate(w[:-1])
             if k in ("parent", "classid", "prio", "rate", "ceil", "burst", "cburst")}
        c = classes.get(o["classid"])
        if not c:
            bad.append(f"class {o['classid']} missing")
            continue
        want_parent = "root" if o["parent"].endswith(":") else o["parent"]
        if c["parent"] != want_parent:
            bad.append(f"class {o['classid']}: parent {c['parent']} != {want_parent}")
        for k in ("rate", "ceil"):
            if rate(c[k]) != int(o[k].rstrip("bit")):
                bad.append(f"class {o['classid']}: {k} {c[k]} != {o[k]}")
        if o["classid"] != o["parent"] + "1" and c.get("prio", "0") != o["prio"]:
            bad.append(f"class {o['classid']}: prio {c.get('prio')} != {o['prio']}")
        for k in ("burst", "cburst"):
            if abs(size(c[k]) - int(o[k][:-1])) > int(o[k][:-1]) / 100:
                bad.append(f"class {o['classid']}: {k} {c[k]} != {o[k]}")
planned = {l.split()[l.split().index("classid") + 1] for l in plan
           if l.startswith("tc class replace")}
for cid, c in classes.items():
    if c["kind"] == "htb" and cid not in planned:
        bad.append(f"class {cid} installed but not planned")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOT
}

# Each profile: the dry-run changes nothing, then apply installs the plan.
each_profile()
{
	local p before out rc after msg

	for p in $(cd "$(dirname "$0")/../tc-profiles" && ls); do
		before=$(tc -n "$R" qdisc show dev "$R_IF2"; tc -n "$R" class show dev "$R_IF2";
			 dev_files "$R" "$R_IF2")
		out=$(qosctl_ns "$R" apply "$p" dev "$R_IF2" rate 100mbit --dry-run 2>&1)
		rc=$?
		if [ $rc -ne 0 ] && grep -q "lacks" <<<"$out"; then
			log_test_skip "$p: dry-run" "$out"
			continue
		fi
		check_err $rc "$out"
		echo "$out" >"$tmp/plan"
		after=$(tc -n "$R" qdisc show dev "$R_IF2"; tc -n "$R" class show dev "$R_IF2";
			dev_files "$R" "$R_IF2")
		[ "$before" = "$after" ]
		check_err $? "the dry-run changed the interface"
		grep -q "^#   ipv4 dscp:" "$tmp/plan" && grep -q "^#   ipv6 dscp:" "$tmp/plan"
		check_err $? "no DSCP tables in the plan"
		log_test "$p: dry-run changes nothing and prints both DSCP tables"

		qosctl_ns "$R" apply "$p" dev "$R_IF2" rate 100mbit
		check_err $? "apply failed"
		tc -n "$R" -j qdisc show dev "$R_IF2" >"$tmp/qdisc.json"
		tc -n "$R" class show dev "$R_IF2" >"$tmp/class.txt"
		msg=$(compare)
		check_err $? "$msg"
		log_test "$p: dry-run plan matches what apply installs"
		qosctl_ns "$R" remove dev "$R_IF2"
	done
}

in_place()
{
	local msg

	# In place over an applied profile, the plan still is the result.
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit
	qosctl_ns "$R" apply diffserv4 dev "$R_IF2" rate 100mbit --dry-run >"$tmp/plan"
	qosctl_ns "$R" show dev "$R_IF2" -j | jq -e '.profile == "pip-20pct"' >/dev/null
	check_err $? "the dry-run changed the applied profile"
	qosctl_ns "$R" apply diffserv4 dev "$R_IF2" rate 100mbit
	tc -n "$R" -j qdisc show dev "$R_IF2" >"$tmp/qdisc.json"
	tc -n "$R" class show dev "$R_IF2" >"$tmp/class.txt"
	msg=$(compare)
	check_err $? "$msg"
	log_test "dry-run over an applied profile matches the in-place result"
}

# tunnel-dscp: shown by the dry-run when not auto, and by show.
tunnel_dscp()
{
	local out

	sed 's/^\[profile\]$/[profile]\ntunnel-dscp = inner/' "$(dirname "$0")/../tc-profiles/pip-20pct" \
		>"$tmp/tunnel-inner"
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit >/dev/null
	check_err $? "apply pip-20pct failed"
	out=$(qosctl_ns "$R" apply "$tmp/tunnel-inner" dev "$R_IF2" rate 100mbit --dry-run 2>&1)
	grep -qx '#   tunnel-dscp inner: 6in4 is classified by its inner DSCP' <<<"$out"
	check_err $? "the dry-run does not show tunnel-dscp inner: $out"
	qosctl_ns "$R" show dev "$R_IF2" -j | jq -e '.tunnel_dscp == "auto"' >/dev/null
	check_err $? "show -j: tunnel_dscp is not auto before"
	qosctl_ns "$R" apply "$tmp/tunnel-inner" dev "$R_IF2" rate 100mbit >/dev/null
	qosctl_ns "$R" show dev "$R_IF2" -j | jq -e '.tunnel_dscp == "inner"' >/dev/null
	check_err $? "show -j: tunnel_dscp is not inner"
	qosctl_ns "$R" show dev "$R_IF2" | grep -qx '6in4 classified by its inner DSCP (tunnel-dscp inner)'
	check_err $? "show does not say tunnel-dscp inner"
	log_test "tunnel-dscp inner: in the dry-run, and in show after apply"
}

ALL_TESTS="each_profile in_place tunnel_dscp"
tests_run
exit $EXIT_STATUS
