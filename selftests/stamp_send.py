#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# A STAMP Session-Sender for reflect.sh's checks, written from RFC 8762
# section 4.2.1 and RFC 8972 section 4.4 apart from qosctl's codec: sends
# COUNT test packets back to back to each DST (all bursts first, then the
# wait) from a chosen source port, DS field, SSID and CoS TLV, with a
# PTPv2 timestamp (Z set) in the Error Estimate, then prints one JSON
# object per DST on what came back:
#   {"sent": N, "replies": M, "tos": [...], "dscp1": [...], "dscp2": [...],
#    "rp": [...], "ssid": [...], "echo_ok": true}
# (each list the distinct values seen; echo_ok: every reply carried back
# the sequence number, timestamp and Error Estimate sent).
#
# --forge sends them from SRC:SPORT through a raw socket, an address the
# host need not own, and waits for nothing: the reply goes to SRC.

import argparse
import json
import select
import socket
import struct
import time

IP_RECVTOS = getattr(socket, "IP_RECVTOS", 13)
IPV6_RECVTCLASS = getattr(socket, "IPV6_RECVTCLASS", 66)
IPV6_TCLASS = getattr(socket, "IPV6_TCLASS", 67)
ERR = 0x4000 | 0x0001  # Z (PTPv2 timestamps), Scale 0, Multiplier 1


def test_packet(seq, ssid, cos):
    now = time.clock_gettime_ns(time.CLOCK_TAI)
    ts = (now // 10**9) << 32 | now % 10**9
    pkt = struct.pack("!IQHH", seq, ts, ERR, ssid) + bytes(28)
    if cos is not None:
        pkt += struct.pack("!BBHHH", 0, 4, 4, cos << 10, 0)
    return pkt, ts


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def forge(a, payloads):
    fam = socket.AF_INET6 if ":" in a.dst[0] else socket.AF_INET
    src, dst = socket.inet_pton(fam, a.src), socket.inet_pton(fam, a.dst[0])
    s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for p in payloads:
        ulen = 8 + len(p)
        udp = struct.pack("!HHHH", a.sport, a.port, ulen, 0) + p
        if fam == socket.AF_INET:
            c = csum(src + dst + struct.pack("!BBH", 0, 17, ulen) + udp) or 0xFFFF
            udp = udp[:6] + struct.pack("!H", c) + udp[8:]
            hdr = struct.pack("!BBHHHBBH4s4s", 0x45, a.dscp << 2, 20 + ulen, 0, 0, 64, 17,
                              0, src, dst)
        else:
            c = csum(src + dst + struct.pack("!I3xB", ulen, 17) + udp) or 0xFFFF
            udp = udp[:6] + struct.pack("!H", c) + udp[8:]
            hdr = struct.pack("!IHBB16s16s", 6 << 28 | a.dscp << 22, ulen, 17, 64, src, dst)
        s.sendto(hdr + udp, (a.dst[0], 0))


def open_socket(a, dst):
    fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if fam == socket.AF_INET:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, a.dscp << 2)
        s.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
    else:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.setsockopt(socket.IPPROTO_IPV6, IPV6_TCLASS, a.dscp << 2)
        s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    s.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", a.sport))
    return s


def send(a, payloads, sent):
    socks = [open_socket(a, dst) for dst in a.dst]
    for s, dst in zip(socks, a.dst):
        for p in payloads:
            # "ff02::1%eth0": a link-local multicast, out of eth0.
            s.sendto(p, socket.getaddrinfo(dst, a.port, type=socket.SOCK_DGRAM)[0][4])
    outs = {s: {"sent": len(payloads), "replies": 0, "tos": set(), "dscp1": set(),
                "dscp2": set(), "rp": set(), "ssid": set(), "echo_ok": True} for s in socks}
    end = time.monotonic() + a.wait
    while (left := end - time.monotonic()) > 0:
        for s in select.select(socks, [], [], left)[0]:
            receive(s, outs[s], sent)
    for s in socks:
        print(json.dumps({k: sorted(v) if isinstance(v, set) else v
                          for k, v in outs[s].items()}))


def receive(s, out, sent):
    data, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(4))
    for level, kind, val in anc:
        if (level, kind) in ((socket.IPPROTO_IP, socket.IP_TOS),
                             (socket.IPPROTO_IPV6, IPV6_TCLASS)):
            out["tos"].add(val[0] if len(val) == 1 else
                           int.from_bytes(val[:4], "little"))
    seq, _, _, ssid, _, s_seq, s_ts, s_err = struct.unpack("!IQHHQIQH", data[:38])
    out["replies"] += 1
    out["ssid"].add(ssid)
    out["echo_ok"] &= s_seq == seq and sent.get(seq) == s_ts and s_err == ERR
    if len(data) >= 52 and data[45] == 4:
        v = struct.unpack("!H", data[48:50])[0]
        out["dscp1"].add(v >> 10)
        out["dscp2"].add(v >> 4 & 0x3F)
        out["rp"].add(v & 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dst", nargs="+")
    ap.add_argument("--port", type=int, default=862)
    ap.add_argument("--sport", type=int, default=0)
    ap.add_argument("--src")
    ap.add_argument("--dscp", type=int, default=0)
    ap.add_argument("--cos", type=int)
    ap.add_argument("--ssid", type=int, default=0)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--wait", type=float, default=0.5)
    ap.add_argument("--forge", action="store_true")
    a = ap.parse_args()
    payloads, sent = [], {}
    for seq in range(a.count):
        p, ts = test_packet(seq, a.ssid, a.cos)
        payloads.append(p)
        sent[seq] = ts
    if a.forge:
        forge(a, payloads)
    else:
        send(a, payloads, sent)


if __name__ == "__main__":
    main()
