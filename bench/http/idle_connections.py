#!/usr/bin/env python3
"""Opens N keep-alive connections to a server, makes one request on each so
they are fully established HTTP connections, then holds them idle and prints
the server's resident memory (VmRSS of --pid) before and while they are held.

  idle_connections.py --port P --pid PID [--count 1000] [--hold 3]
"""
import argparse, socket, time


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--hold", type=float, default=3.0)
    ap.add_argument("--path", default="/")
    a = ap.parse_args()
    before = rss_kb(a.pid)
    socks, ok = [], 0
    req = f"GET {a.path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    for _ in range(a.count):
        s = socket.create_connection(("127.0.0.1", a.port))
        s.sendall(req)
        socks.append(s)
    for s in socks:
        s.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        if data.startswith(b"HTTP/1.1 200"):
            ok += 1
    time.sleep(a.hold)
    during = rss_kb(a.pid)
    alive = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                continue  # closed by the server
        except BlockingIOError:
            pass
        alive += 1
    for s in socks:
        s.close()
    print(f"idle connections: {a.count} opened, {ok} answered 200, {alive} still open after "
          f"{a.hold:.0f}s; server RSS {before/1024:.1f} MB before, {during/1024:.1f} MB with them "
          f"held ({(during-before)/1024:.1f} MB for {a.count})")


if __name__ == "__main__":
    main()
