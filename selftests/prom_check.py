#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# The checks of prometheus.sh over qosctl's Prometheus text, parsed with
# the Prometheus project's own Python parser.
#
#   prom_check.py CHECK CTX.json
#
# CTX.json (written by prometheus.sh) names the devices, the scrapes taken
# before and after the traffic, and what was sent. Each CHECK prints what
# is wrong, one line each, and exits 1 if anything is.

import json
import re
import sys

from prometheus_client.parser import text_string_to_metric_families

FAMS = ("ipv4", "ipv6", "ipv6in4")
CLASSES = ("pip", "be", "lbe")
bad = []


def parse(path):
    """{(sample name, frozenset of labels): value}, and the families."""
    samples, fams = {}, {}
    for f in text_string_to_metric_families(open(path).read()):
        fams[f.name] = f
        for s in f.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples, fams


def key(name, **labels):
    return (name, frozenset(labels.items()))


class Delta:
    """Counters of one device: after - before."""

    def __init__(self, ctx, dev):
        self.dev = ctx[dev]
        self.before, _ = parse(ctx["files"][dev + "_before"])
        self.after, self.fams = parse(ctx["files"][dev + "_after"])

    def get(self, name, **labels):
        k = key(name, device=self.dev, **labels)
        if k not in self.after:
            bad.append(f"{self.dev}: no series {name}{labels}")
            return None
        return self.after[k] - self.before.get(k, 0)

    def expect(self, want, name, **labels):
        got = self.get(name, **labels)
        if got is not None and got != want:
            bad.append(f"{self.dev}: {name}{labels} moved by {got:g}, expected {want:g}")


def colours(ctx, d):
    """The pip policer's colours, per family: {family: (green, yellow, red)}."""
    return {f: tuple(d.get("qosctl_policer_packets_total", **{"class": "pip"}, family=f,
                           color=c) or 0 for c in ("green", "yellow", "red"))
            for f in FAMS}


def expected(ctx, r1):
    """Packets each (device, direction, class, family) must have counted."""
    sent, rx, col = ctx["sent"], ctx["replies"], colours(ctx, r1)
    g = {f: col[f][0] for f in FAMS}
    y = {f: col[f][1] for f in FAMS}
    exp = {}
    for f in ("ipv4", "ipv6"):
        udp = ctx["udp"] if f == "ipv6" else 0
        exp[("r1", "ingress", "pip", f)] = sent["pip"][f]
        exp[("r1", "ingress", "be", f)] = sent["be"][f] + udp
        exp[("r1", "ingress", "lbe", f)] = sent["lbe"][f]
        # The class travels in the mark from $R_IF1's ingress to $R_IF2's
        # egress: pip less the red drops, the UDP in the rule's be. The
        # replies are classified afresh by their DSCP, which is the
        # request's: AF11 (be) for the requests remarked yellow.
        exp[("r2", "egress", "pip", f)] = g[f] + y[f]
        exp[("r2", "egress", "be", f)] = sent["be"][f] + udp
        exp[("r2", "egress", "lbe", f)] = sent["lbe"][f]
        for dev, d in (("r2", "ingress"), ("r1", "egress")):
            exp[(dev, d, "pip", f)] = g[f]
            exp[(dev, d, "be", f)] = rx["be"][f] + y[f]
            exp[(dev, d, "lbe", f)] = rx["lbe"][f]
    exp[("r1", "ingress", "lbe", "ipv6in4")] = ctx["tun"]
    exp[("r2", "egress", "lbe", "ipv6in4")] = ctx["tun"]
    return exp


def check_classes(ctx, dev):
    """Every class counter of @dev, packets and bytes, exactly."""
    d = {"r1": Delta(ctx, "r1"), "r2": Delta(ctx, "r2")}
    exp = expected(ctx, d["r1"])
    for direction in ("ingress", "egress"):
        for c in CLASSES:
            for f in FAMS:
                n = exp.get((dev, direction, c, f), 0)
                lbl = {"direction": direction, "class": c, "family": f}
                d[dev].expect(n, "qosctl_class_packets_total", **lbl)
                d[dev].expect(n * ctx["frame"][f], "qosctl_class_bytes_total", **lbl)
    for direction in ("ingress", "egress"):
        for reason in ("non_ip", "truncated", "bad_header", "bad_length", "bad_ext_header",
                       "ext_chain_too_long"):
            d[dev].expect(0, "qosctl_unparsed_packets_total", direction=direction,
                          reason=reason)


def check_ping(ctx):
    """ping's own count agrees with the policer: every green or yellow
    request was answered, no other was."""
    col = colours(ctx, Delta(ctx, "r1"))
    for f in ("ipv4", "ipv6"):
        if ctx["replies"]["pip"][f] != col[f][0] + col[f][1]:
            bad.append(f"pip {f}: {ctx['replies']['pip'][f]} replies, policer green + "
                       f"yellow {col[f][0] + col[f][1]}")
        for c in CLASSES:
            if ctx["sent"][c][f] != ctx["count"][c][f]:
                bad.append(f"ping {c} {f} sent {ctx['sent'][c][f]} of {ctx['count'][c][f]}")
            if c != "pip" and ctx["replies"][c][f] != ctx["sent"][c][f]:
                bad.append(f"ping {c} {f}: {ctx['replies'][c][f]} replies of "
                           f"{ctx['sent'][c][f]}")


def check_policers(ctx):
    """$R_IF1's pip policer: the colours sum to the pip packets, red ones were
    dropped, yellow ones remarked, and there were some of each. $R_IF2's
    (20 Mbit/s) saw only green replies."""
    r1, r2 = Delta(ctx, "r1"), Delta(ctx, "r2")
    col = colours(ctx, r1)
    for f in FAMS:
        g, y, r = col[f]
        sent = ctx["sent"]["pip"].get(f, 0)
        if g + y + r != sent:
            bad.append(f"{r1.dev} pip {f}: green {g:g} + yellow {y:g} + red {r:g} != {sent}")
        for color, n in (("green", g), ("yellow", y), ("red", r)):
            r1.expect(n * ctx["frame"][f], "qosctl_policer_bytes_total", **{"class": "pip"},
                      family=f, color=color)
        for verdict, n in (("drop", r), ("remark", y), ("demote", 0)):
            lbl = {"direction": "ingress", "class": "pip", "family": f, "verdict": verdict}
            r1.expect(n, "qosctl_class_verdict_packets_total", **lbl)
            r1.expect(n * ctx["frame"][f], "qosctl_class_verdict_bytes_total", **lbl)
        # $R_IF2 polices the replies to the green requests (EF).
        for color, n in (("green", g), ("yellow", 0), ("red", 0)):
            r2.expect(n, "qosctl_policer_packets_total", **{"class": "pip"}, family=f,
                      color=color)
    if sum(col[f][1] for f in FAMS) == 0 or sum(col[f][2] for f in FAMS) == 0:
        bad.append(f"{r1.dev}: no yellow or no red packet: {col}")
    # No other verdict anywhere.
    for d in (r1, r2):
        for (name, lbls), _ in d.after.items():
            lbl = dict(lbls)
            if name != "qosctl_class_verdict_packets_total" or lbl["device"] != d.dev:
                continue
            if d is r1 and lbl["direction"] == "ingress" and lbl["class"] == "pip":
                continue
            del lbl["device"]
            d.expect(0, name, **lbl)


def check_qdisc(ctx, dev):
    """The qdisc classes sent what the egress program counted; the root qdisc
    sent their sum; nothing dropped, nothing left queued."""
    d = {"r1": Delta(ctx, "r1"), "r2": Delta(ctx, "r2")}
    exp = expected(ctx, d["r1"])
    total_p = total_b = 0
    for c in CLASSES:
        p = sum(exp.get((dev, "egress", c, f), 0) for f in FAMS)
        b = sum(exp.get((dev, "egress", c, f), 0) * ctx["frame"][f] for f in FAMS)
        d[dev].expect(p, "qosctl_qdisc_class_sent_packets_total", direction="egress", **{"class": c})
        d[dev].expect(b, "qosctl_qdisc_class_sent_bytes_total", direction="egress", **{"class": c})
        d[dev].expect(0, "qosctl_qdisc_class_drops_total", direction="egress", **{"class": c})
        total_p += d[dev].get("qosctl_qdisc_class_sent_packets_total", direction="egress",
                              **{"class": c}) or 0
        total_b += d[dev].get("qosctl_qdisc_class_sent_bytes_total", direction="egress",
                              **{"class": c}) or 0
        if d[dev].after.get(key("qosctl_qdisc_class_backlog_packets", device=d[dev].dev,
                                direction="egress", **{"class": c})) != 0:
            bad.append(f"{d[dev].dev}: class {c} has a backlog")
    if total_p == 0:
        bad.append(f"{d[dev].dev}: the qdisc classes sent nothing")
    d[dev].expect(total_p, "qosctl_qdisc_sent_packets_total", direction="egress")
    d[dev].expect(total_b, "qosctl_qdisc_sent_bytes_total", direction="egress")
    d[dev].expect(0, "qosctl_qdisc_drops_total", direction="egress")
    if d[dev].after.get(key("qosctl_qdisc_backlog_bytes", device=d[dev].dev, direction="egress")) != 0:
        bad.append(f"{d[dev].dev}: the root qdisc has a backlog")


def check_rules(ctx):
    """Named rules with the lowest ids get series, 256 at most; the rule
    that matched counted exactly the datagrams sent."""
    r1 = Delta(ctx, "r1")
    rules = json.load(open(ctx["files"]["rules_json"]))
    named = sorted((r for r in rules if r["name"]), key=lambda r: r["id"])
    want = {str(r["id"]): r for r in named[:256]}
    got = {dict(k[1])["rule_id"]: dict(k[1]) for k in r1.after
           if k[0] == "qosctl_rule_packets_total" and dict(k[1])["device"] == r1.dev}
    if len(named) <= 256 or len(rules) == len(named):
        bad.append(f"setup: {len(named)} named rules of {len(rules)}: the cap is not tested")
    if set(got) != set(want):
        bad.append(f"rule series for ids {sorted(set(got) ^ set(want), key=int)[:10]}... "
                   f"({len(got)} series, {len(want)} expected)")
    for rid, lbl in got.items():
        r = want.get(rid)
        if r and (lbl["rule"] != r["name"] or lbl["class"] != r["class"]):
            bad.append(f"rule {rid}: labels {lbl}, rule list says {r}")
        n = ctx["udp"] if r and r["name"] == "h1udp" else 0
        del lbl["device"]
        r1.expect(n, "qosctl_rule_packets_total", **lbl)
        r1.expect(n * ctx["frame"]["ipv6"], "qosctl_rule_bytes_total", **lbl)
    # stats -j and stats -s show the same hits as the series.
    st = json.load(open(ctx["files"]["r1_stats_json"]))
    text = open(ctx["files"]["r1_stats_txt"]).read()
    if (st["rules"]["installed"], st["rules"]["named"]) != (len(rules), len(named)):
        bad.append(f"stats -j rules: {st['rules']['installed']} installed, "
                   f"{st['rules']['named']} named; rule list: {len(rules)}, {len(named)}")
    for h in st["rules"]["hits"]:
        for what in ("packets", "bytes"):
            v = r1.after.get(key(f"qosctl_rule_{what}_total", device=r1.dev, rule=h["name"],
                                 rule_id=str(h["id"]), **{"class": h["class"]}))
            if v != h[what]:
                bad.append(f"stats -j rule {h['id']} {what} {h[what]} != series {v}")
        row = f"rule {h['name']}"[:19]
        if not re.search(rf"^{re.escape(row)} +{h['packets']} +{h['bytes']} +id {h['id']} "
                         rf"class {h['class']}$", text, re.M):
            bad.append(f"stats -s has no row for rule {h['id']} ({h['name']})")
    if [h["id"] for h in st["rules"]["hits"]] != [int(i) for i in sorted(want, key=int)]:
        bad.append("stats -j rules: not the named rules with the lowest ids")
    if not any(r["name"] == "h1udp" for r in named[:256]):
        bad.append("rule h1udp is not among the exported rules")
    if r1.after.get(key("qosctl_rules_installed", device=r1.dev)) != len(rules):
        bad.append(f"qosctl_rules_installed != {len(rules)}")
    if r1.after.get(key("qosctl_rules_capacity", device=r1.dev)) != ctx["rule_capacity"]:
        bad.append(f"qosctl_rules_capacity != {ctx['rule_capacity']}")


def check_json(ctx):
    """The same numbers as `stats -j`, read at the same moment."""
    st = json.load(open(ctx["files"]["stats_json"]))
    after, _ = parse(ctx["files"]["r2_after"])
    dev = ctx["r2"]
    for c in st["classes"]:
        for direction in ("ingress", "egress"):
            for f in FAMS:
                for what in ("packets", "bytes"):
                    k = key(f"qosctl_class_{what}_total", device=dev, direction=direction,
                            **{"class": c["name"]}, family=f)
                    if after.get(k) != c[direction][f][what]:
                        bad.append(f"{c['name']} {direction} {f} {what}: {after.get(k)} != "
                                   f"stats -j {c[direction][f][what]}")
        k = key("qosctl_qdisc_class_sent_packets_total", device=dev, direction="egress",
                **{"class": c["name"]})
        if after.get(k) != c["qdisc"]["sent_packets"]:
            bad.append(f"{c['name']} qdisc sent: {after.get(k)} != {c['qdisc']['sent_packets']}")
    for what, js in (("sent_packets_total", "sent_packets"), ("sent_bytes_total", "sent_bytes"),
                     ("drops_total", "drops"), ("overlimits_total", "overlimits"),
                     ("requeues_total", "requeues"), ("backlog_bytes", "backlog_bytes"),
                     ("backlog_packets", "backlog_packets")):
        v = after.get(key(f"qosctl_qdisc_{what}", device=dev, direction="egress"))
        if v != st["qdisc"][js]:
            bad.append(f"root qdisc {js}: series {v} != stats -j {st['qdisc'][js]}")


def doc_families(path):
    """{name: (type, labels)} from the tables of Documentation/metrics.rst."""
    out = {}
    for line in open(path):
        m = re.match(r"^``(qosctl_\w+)``\s+(gauge|counter)\s+(\S+)\s", line)
        # The probe's and the reflector's families come from probe send
        # --continuous and probe reflect, not from the devices: probe.sh
        # and reflect.sh check them against their own tables.
        if m and not m.group(1).startswith(("qosctl_probe_", "qosctl_reflect_")):
            out[m.group(1)] = (m.group(2), set(m.group(3).split(",")))
    return out


def check_doc(ctx):
    """Families, types and label sets of the output are those documented."""
    doc = doc_families(ctx["files"]["doc"])
    if len(doc) < 10:
        bad.append(f"{ctx['files']['doc']}: only {len(doc)} families found")
    seen, empty = {}, set()
    for path in (ctx["files"]["r1_after"], ctx["files"]["r2_after"]):
        for f in text_string_to_metric_families(open(path).read()):
            for s in f.samples:
                seen.setdefault(s.name, (f.type, set()))[1].add(frozenset(s.labels))
            if not f.samples:
                empty.add(f.name)
    for name in empty:
        if not any(n == name or n == name + "_total" for n in seen):
            bad.append(f"family {name} has no sample: the test does not exercise it")
    for name, (typ, labelsets) in seen.items():
        if name not in doc:
            bad.append(f"{name} is not in the documentation")
            continue
        if typ != doc[name][0]:
            bad.append(f"{name}: {typ}, documented as {doc[name][0]}")
        for ls in labelsets:
            if set(ls) != doc[name][1]:
                bad.append(f"{name}: labels {sorted(ls)}, documented {sorted(doc[name][1])}")
    for name in doc:
        if name not in seen:
            bad.append(f"documented {name} is not in the output")


def check_same(ctx):
    """Two scrapes of the same quiescent moment hold the same series."""
    a, _ = parse(ctx["files"]["all"])
    b, _ = parse(ctx["files"]["scrape"])
    for k in sorted(set(a) | set(b), key=str):
        if a.get(k) != b.get(k):
            bad.append(f"{k[0]}{dict(k[1])}: stats {a.get(k)}, exporter {b.get(k)}")
    devs = {dict(k[1]).get("device") for k in b}
    if not {ctx["r1"], ctx["r2"]} <= devs:
        bad.append(f"devices in the scrape: {devs}")


def check_dashboard(ctx):
    """Every metric the dashboard queries is in the output, with the labels
    the query uses; the queries go to a rules file for promtool."""
    dash = json.load(open(ctx["files"]["dashboard"]))
    labels = {}
    for path in (ctx["files"]["r1_after"], ctx["files"]["r2_after"]):
        for f in text_string_to_metric_families(open(path).read()):
            for s in f.samples:
                labels.setdefault(s.name, set()).update(s.labels)
    exprs = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ("expr", "definition") and isinstance(v, str):
                    exprs.append(v)
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(dash)
    names = set()
    for e in exprs:
        used = set()
        for m in re.finditer(r"(qosctl_\w+)\s*(\{[^}]*\})?", e):
            name, sel = m.group(1), m.group(2) or ""
            names.add(name)
            if name not in labels:
                bad.append(f"dashboard queries {name}, which qosctl does not export")
                continue
            used |= labels[name]
            for lbl in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", sel):
                if lbl not in labels[name]:
                    bad.append(f"dashboard: {name} has no label {lbl}")
        for grp in re.findall(r"\bby\s*\(([^)]*)\)", e):
            for lbl in filter(None, (x.strip() for x in grp.split(","))):
                if lbl not in used:
                    bad.append(f"dashboard: sum by {lbl} in '{e}': no such label")
        lv = re.match(r"label_values\((.*),\s*(\w+)\)$", e)
        if lv and lv.group(2) not in used:
            bad.append(f"dashboard: label_values of {lv.group(2)}: no such label")
    for want in ("qosctl_class_bytes_total", "qosctl_qdisc_class_drops_total",
                 "qosctl_class_verdict_packets_total"):
        if want not in names:
            bad.append(f"dashboard does not plot {want}")
    with open(ctx["files"]["dash_rules"], "w") as out:
        out.write("groups:\n  - name: dashboard\n    rules:\n")
        for i, e in enumerate(exprs):
            e = (e.replace("$__rate_interval", "5m").replace("$device", "x")
                 .replace("$class", "x"))
            if e.startswith("label_values("):
                e = re.match(r"label_values\((.*),\s*\w+\)$", e).group(1)
            out.write(f"      - record: qosctl:dashboard:{i}\n        expr: {json.dumps(e)}\n")


CHECKS = {
    "r1": lambda c: check_classes(c, "r1"),
    "r2": lambda c: check_classes(c, "r2"),
    "ping": check_ping,
    "policers": check_policers,
    "qdisc-r1": lambda c: check_qdisc(c, "r1"),
    "qdisc-r2": lambda c: check_qdisc(c, "r2"),
    "rules": check_rules,
    "json": check_json,
    "doc": check_doc,
    "same": check_same,
    "dashboard": check_dashboard,
}

if __name__ == "__main__":
    CHECKS[sys.argv[1]](json.load(open(sys.argv[2])))
    print("\n".join(bad[:20]))
    sys.exit(1 if bad else 0)
