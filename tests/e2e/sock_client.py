#!/usr/bin/env python3
"""Client of msivm's --serial/--console socket=PATH for the e2e tests.

usage: sock_client.py PATH [TRIGGER SEND]
Connects to PATH (retrying for 20 s until msivm has made it), prints everything
msivm sends until it closes the connection; once TRIGGER has been seen in the
output, sends SEND (with \\n escapes) once.
"""
import socket
import sys
import time

path = sys.argv[1]
trigger = sys.argv[2].encode() if len(sys.argv) > 3 else None
payload = sys.argv[3].encode().decode("unicode_escape").encode() if len(sys.argv) > 3 else b""
s = socket.socket(socket.AF_UNIX)
deadline = time.time() + 20
while True:
    try:
        s.connect(path)
        break
    except OSError:
        if time.time() > deadline:
            sys.exit("sock_client: cannot connect to %s" % path)
        time.sleep(0.05)
s.settimeout(30)
data = b""
while True:
    try:
        b = s.recv(65536)
    except socket.timeout:
        break
    if not b:
        break
    data += b
    if trigger is not None and trigger in data:
        s.sendall(payload)
        trigger = None
sys.stdout.write(data.decode(errors="replace"))
