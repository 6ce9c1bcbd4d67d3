#!/usr/bin/env python3
"""Drives `msivm run --serial tty` on a pseudo-terminal: types into the guest, quits with Ctrl-a x.

usage: serial_tty.py MSIVM PROBE; prints one line per finding and exits 0 when all hold."""
import os, pty, select, sys, termios, time

msivm, probe = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(msivm, [msivm, "run", "--kernel", probe, "--serial", "tty", "--cmdline", "echo"])
before = termios.tcgetattr(fd)
buf = b""

def wait_for(what, secs=10.0):
    global buf
    end = time.time() + secs
    while what not in buf and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                buf += os.read(fd, 4096)
            except OSError:
                break
    return what in buf

ok = True
def check(cond, text):
    global ok
    print(("ok   - " if cond else "FAIL - ") + text)
    ok = ok and cond

check(wait_for(b"probe: echo ready"), "the guest waits for input on COM1")
raw = termios.tcgetattr(fd)
check(not (raw[3] & termios.ICANON) and not (raw[3] & termios.ECHO), "the terminal is in raw mode while the VM runs")
os.write(fd, b"typed line\r")
check(wait_for(b"probe: echo typed line"), "a line typed on the terminal reaches the guest, which echoes it")
os.write(fd, b"\x01x")
_, st = os.waitpid(pid, 0)
code = os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)
check(code == 130, "Ctrl-a x stops msivm with status 130 (got %d)" % code)
after = termios.tcgetattr(fd)
check(after == before, "the terminal's settings are restored on exit")
sys.exit(0 if ok else 1)
