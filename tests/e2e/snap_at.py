#!/usr/bin/env python3
"""Snapshot a VM at a point of its disk workload, for test_snapshot.sh.

usage: snap_at.py API_SOCKET DEVICE N STATE MEM TIMEOUT_S [READY_FILE]
Polls msivm's GET /metrics on API_SOCKET every 5 ms until device DEVICE's queue 0 has completed
at least N requests, then at once sends PUT /vm/snapshot {"state": STATE, "mem": MEM, "resume":
false} (the VM stays paused) and prints its reply's JSON body. One process does both, so the
snapshot follows the N-th completion by one request's round trip, not by the start of a client
process (seconds in a nested host): the workload can be small and still be snapshotted in its
middle. With READY_FILE, that file is created once this process polls (Python's start alone took
seconds in a freshly booted nested host, longer than a small workload: start the VM after it).
Exit 0 on a 2xx reply, 1 on another reply, 2 if N was not reached within TIMEOUT_S.
"""
import json
import socket
import sys
import time

sock, device, want, state, mem, timeout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    sys.argv[4], sys.argv[5], float(sys.argv[6])


def request(method, url, body=b""):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(60)
    s.connect(sock)
    s.sendall(("%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\nConnection: close\r\n\r\n" % (method, url, len(body))).encode() + body)
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), payload.decode(errors="replace")


deadline = time.time() + timeout
if len(sys.argv) > 7:
    open(sys.argv[7], "w").close()
while True:
    try:
        code, body = request("GET", "/metrics")
        done = json.loads(body)["devices"][device]["queues"][0]["completions"] if code == 200 else 0
    except (OSError, ValueError, KeyError, IndexError):
        done = 0  # the socket not made yet, or the device not set up
    if done >= want:
        break
    if time.time() > deadline:
        sys.stderr.write("snap_at: device %d's queue 0 did not complete %d requests in %g s (%d)\n" %
                         (device, want, timeout, done))
        sys.exit(2)
    time.sleep(0.005)
code, body = request("PUT", "/vm/snapshot", json.dumps({"state": state, "mem": mem, "resume": False}).encode())
print(body)
sys.exit(0 if 200 <= code < 300 else 1)
