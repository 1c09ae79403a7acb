#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# Send mutated frames out of IFACE to DST_MAC over an AF_PACKET socket:
# well-formed templates of the shapes the parser finds hardest (IPv6 with
# a chain of extension headers, 6in4, QinQ with IPv4 and IPv6 inside, IPv4
# with options), each truncated, bit-flipped or given lying length fields.
# The Ethernet addresses are kept so that every frame reaches the router.
#
#   garbage_send.py IFACE DST_MAC COUNT SEED
#
# Prints the number of frames sent, and how many of them the receiving
# kernel drops before tc ingress: a frame with a VLAN ethertype shorter
# than the tag plus the ethertype after it (20 bytes), which
# skb_vlan_untag() frees in __netif_receive_skb_core().
#
# Best effort DSCP throughout: garbage classified into a policed class
# would take the policer's tokens from the valid traffic the test watches.

import random
import socket
import struct
import sys

SRC4, DST4 = bytes([10, 1, 1, 1]), bytes([10, 1, 2, 1])
SRC6 = socket.inet_pton(socket.AF_INET6, "2001:db8:1::1")
DST6 = socket.inet_pton(socket.AF_INET6, "2001:db8:2::1")


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(proto, payload, tos=0, opts=b""):
    ihl = (20 + len(opts)) // 4
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, 20 + len(opts) + len(payload),
                    1, 0, 64, proto, 0, SRC4, DST4) + opts
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def ipv6(nexthdr, payload, tclass=0, flow=0x12345):
    vtf = 6 << 28 | tclass << 20 | flow
    return struct.pack("!IHBB16s16s", vtf, len(payload), nexthdr, 64, SRC6, DST6) + payload


def ext(nexthdr, length=8):
    # Hop-by-hop or destination options: PadN over the option area.
    return struct.pack("!BBBB", nexthdr, length // 8 - 1, 1, length - 4) + bytes(length - 4)


def udp(n=32):
    return struct.pack("!HHHH", 4000, 5000, 8 + n, 0) + bytes(n)


def templates():
    # Hop-by-hop, destination options, routing (type 4, no segments
    # left), an atomic fragment, UDP.
    routing = struct.pack("!BBBB4s", 44, 0, 4, 0, bytes(4))
    frag = struct.pack("!BBHI", 17, 0, 0, 7)
    v6_chain = ipv6(0, ext(60) + ext(43) + routing + frag + udp())
    return [
        (0x86DD, v6_chain),
        (0x86DD, ipv6(44, struct.pack("!BBHI", 17, 0, 8 << 3 | 1, 9) + udp())),
        (0x0800, ipv4(41, ipv6(17, udp()))),
        (0x0800, ipv4(17, udp(), opts=b"\x01" * 8)),
        ("qinq", 0x0800, ipv4(17, udp())),
        ("qinq", 0x86DD, ipv6(0, ext(17) + udp())),
        (0x88CC, bytes(40)),
    ]


def frame(dst, src, t):
    if t[0] == "qinq":
        _, proto, l3 = t
        tags = struct.pack("!HHHH", 0x88A8, 100, 0x8100, 200)
        return dst + src + tags + struct.pack("!H", proto) + l3
    proto, l3 = t
    return dst + src + struct.pack("!H", proto) + l3


def mutate(rnd, f):
    f = bytearray(f)
    how = rnd.randrange(4)
    if how == 0:
        # Truncated anywhere past the MAC addresses.
        del f[rnd.randrange(14, len(f)):]
    elif how == 1:
        for _ in range(rnd.randrange(1, 6)):
            i = rnd.randrange(12, len(f))
            f[i] ^= 1 << rnd.randrange(8)
    elif how == 2:
        # A random byte somewhere in the first 80 after the MACs: ethertypes,
        # versions, header lengths and next-header values all live there.
        f[rnd.randrange(12, min(len(f), 80))] = rnd.randrange(256)
    else:
        f += bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 64)))
    return bytes(f[:1514])


def main():
    ifname, dst, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rnd = random.Random(seed)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    src = s.getsockname()[4]
    dst = bytes.fromhex(dst.replace(":", ""))
    tpl = [frame(dst, src, t) for t in templates()]
    sent = short_vlan = 0
    for _ in range(count):
        f = mutate(rnd, rnd.choice(tpl))
        s.send(f)
        sent += 1
        if f[12:14] in (b"\x81\x00", b"\x88\xa8") and len(f) < 20:
            short_vlan += 1
    print(sent, short_vlan)


if __name__ == "__main__":
    main()
