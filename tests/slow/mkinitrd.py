#!/usr/bin/env python3
"""tests/slow: writes a newc cpio archive holding one executable, /init (argv[1] -> argv[2])."""
import sys


def entry(name, mode, data, ino):
    name_b = name.encode() + b"\0"
    fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0]
    hdr = b"070701" + b"".join(b"%08X" % v for v in fields)
    out = hdr + name_b
    out += b"\0" * (-len(out) % 4)
    out += data
    out += b"\0" * (-len(out) % 4)
    return out


def main():
    init = open(sys.argv[1], "rb").read()
    arc = entry("init", 0o100755, init, 1) + entry("TRAILER!!!", 0, b"", 0)
    arc += b"\0" * (-len(arc) % 512)
    open(sys.argv[2], "wb").write(arc)


main()
