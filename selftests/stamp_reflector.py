#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# A minimal STAMP Session-Reflector (RFC 8762 section 4.3.1, unauthenticated,
# stateless, no TLV support), written apart from qosctl's codec from the
# RFC's layout, so that probe.sh checks the wire format against a second
# implementation. The reply is as long as the test packet, zero-filled past
# the 44 bytes, as an RFC 8762 reflector that knows no TLV answers.
#
# Usage: stamp_reflector.py PORT LOG [twamp-light]: one line per test
# packet in LOG, "FAMILY SSID SEQ DSCP", until killed. twamp-light: reply
# as a reflector that knows nothing of RFC 8972 and keeps PTP time: SSID
# left 0, timestamps in the PTPv2 truncated format (seconds and
# nanoseconds of CLOCK_TAI) with Z set in its Error Estimate.

import select
import socket
import struct
import sys
import time

IP_RECVTOS = getattr(socket, "IP_RECVTOS", 13)
IPV6_RECVTCLASS = getattr(socket, "IPV6_RECVTCLASS", 66)
IPV6_TCLASS = getattr(socket, "IPV6_TCLASS", 67)
NTP_OFFSET = 2208988800


def ntp_now():
    ns = time.time_ns()
    return (ns // 10**9 + NTP_OFFSET) << 32 | ((ns % 10**9) << 32) // 10**9


def ptp_now():
    ns = time.clock_gettime_ns(time.CLOCK_TAI)
    return (ns // 10**9) << 32 | ns % 10**9


def main():
    port, log = int(sys.argv[1]), open(sys.argv[2], "w", buffering=1)
    light = sys.argv[3:] == ["twamp-light"]
    now, err = (ptp_now, 0x4001) if light else (ntp_now, 0x0001)
    s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s4.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
    s4.bind(("0.0.0.0", port))
    s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s6.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
    s6.bind(("::", port))
    while True:
        ready, _, _ = select.select([s4, s6], [], [])
        for s in ready:
            data, anc, _, addr = s.recvmsg(2048, socket.CMSG_SPACE(4))
            rx = now()
            tos = 0
            for level, kind, val in anc:
                if level == socket.IPPROTO_IP and kind == socket.IP_TOS:
                    tos = val[0]
                elif level == socket.IPPROTO_IPV6 and kind == IPV6_TCLASS:
                    tos = int.from_bytes(val[:4], sys.byteorder)
            if len(data) < 44:
                continue
            # Sender: sequence, timestamp, error estimate, SSID (RFC 8972).
            seq, ts, s_err, ssid = struct.unpack("!IQHH", data[:16])
            # Reflector: sequence, timestamp, error estimate, SSID, receive
            # timestamp, sender's sequence, timestamp, error estimate, MBZ,
            # sender's TTL (not read here: 255), MBZ.
            reply = struct.pack("!IQHHQIQHHB3x", seq, now(), err, 0 if light else ssid, rx,
                                seq, ts, s_err, 0, 255)
            s.sendto(reply + bytes(len(data) - len(reply)), addr)
            fam = 4 if s is s4 else 6
            log.write(f"{fam} {ssid} {seq} {tos >> 2}\n")


if __name__ == "__main__":
    main()
