#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# Hold many TCP connections to an HTTP server open, the way a careless or
# hostile client would:
#
#   conn_flood.py HOST PORT IDLE IDLE_SRC[,SRC...] SLOW SLOW_SRC[,SRC...]
#
# IDLE connections send nothing; SLOW ones send a request line and then
# trickle a header one byte every half second, never ending the headers,
# so that an inactivity timeout never fires on them. Each kind is spread
# round-robin over its source addresses (bound before connect), so that a
# server's per-address cap can be told apart from its global one.
#
# Prints "ready idle=N slow=N failed=N" once every connect has been tried,
# then once a second "open idle=N slow=N": the connections the server has
# not closed yet. Runs until killed.

import resource
import selectors
import socket
import sys
import time

TRICKLE = 0.5


def connect(host, port, src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(2)
    try:
        s.connect((host, port))
    except OSError:
        s.close()
        return None
    s.setblocking(False)
    return s


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    n_idle, idle_src = int(sys.argv[3]), sys.argv[4].split(",")
    n_slow, slow_src = int(sys.argv[5]), sys.argv[6].split(",")

    # One descriptor per connection, and the default soft limit is often
    # 1024.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n_idle + n_slow + 64
    if hard != resource.RLIM_INFINITY and hard < want:
        sys.exit(f"conn_flood.py: need {want} descriptors, hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    sel = selectors.DefaultSelector()
    open_ = {"idle": 0, "slow": 0}
    slow = []
    failed = 0
    for kind, n, srcs in (("idle", n_idle, idle_src), ("slow", n_slow, slow_src)):
        for i in range(n):
            s = connect(host, port, srcs[i % len(srcs)])
            if not s:
                failed += 1
                continue
            if kind == "slow":
                try:
                    s.send(b"GET /metrics HTTP/1.1\r\nHost: flood\r\nX-Flood: ")
                except OSError:
                    pass
                slow.append(s)
            sel.register(s, selectors.EVENT_READ, kind)
            open_[kind] += 1
    print(f"ready idle={open_['idle']} slow={open_['slow']} failed={failed}", flush=True)

    next_trickle = next_status = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= next_trickle:
            for s in slow:
                if s.fileno() >= 0:
                    try:
                        s.send(b"a")
                    except OSError:
                        pass
            next_trickle = now + TRICKLE
        if now >= next_status:
            print(f"open idle={open_['idle']} slow={open_['slow']}", flush=True)
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
            sel.unregister(s)
            s.close()
            open_[key.data] -= 1


if __name__ == "__main__":
    main()
