#!/usr/bin/env bash
# End-to-end: pvpanic and --dump-on-crash: a guest that panics ends msivm with 126 and leaves an ELF core (RAM, every vCPU's registers) and msivm's device view.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# The probe's power=panic reads pvpanic's port (0x505, ACPI QEMU0001) and writes PANICKED, as
# Linux's pvpanic driver does when the kernel panics.
mkdir -p "$TMP/d"
run run --kernel "$PROBE" --cpus 2 --rng "" --cmdline "smp power=panic" --dump-on-crash "$TMP/d"
expect "power=panic: msivm ends with 126 and says the guest panicked" 126 \
	'^probe: pvpanic offers 0x3$' 'pvpanic: the guest panicked'
core=$(ls "$TMP"/d/*.core 2>/dev/null | head -n1)
json=${core%.core}.json
if [ -n "$core" ] && grep -q "crash dump (the guest panicked (pvpanic)): $TMP/d/" <<<"$err"; then
	pass "the dump is written and named on stderr ($(basename "$core"))"
else
	fail "no dump in $TMP/d (files: $(ls "$TMP/d" | tr '\n' ' '))"
fi

# The core, read as a debugger would: an x86-64 ELF core, one NT_PRSTATUS per vCPU with RIP in
# the probe's code, RAM as PT_LOAD at its guest-physical address (the probe's code page in it is
# the probe file's), sparse on disk.
check=$(python3 - "$core" "$PROBE" <<'PY' 2>&1
import struct, sys
core, probe = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read()
def ehdr(b):
    return struct.unpack_from('<16sHHIQQQIHHHHHH', b, 0)
e = ehdr(core)
assert e[0][:4] == b'\x7fELF' and e[1] == 4 and e[2] == 62, 'not an x86-64 ELF core'
def phdrs(b, e):
    return [struct.unpack_from('<IIQQQQQQ', b, e[5] + i * e[9]) for i in range(e[10])]
ph = phdrs(core, e)
notes = [p for p in ph if p[0] == 4]
loads = [p for p in ph if p[0] == 1]
off, end, rips, cr3s, qemu = notes[0][2], notes[0][2] + notes[0][5], [], [], []
while off < end:
    nsz, dsz, typ = struct.unpack_from('<III', core, off)
    name = core[off + 12:off + 12 + nsz - 1]
    desc = off + 12 + ((nsz + 3) & ~3)
    if name == b'CORE' and typ == 1:
        rips.append(struct.unpack_from('<Q', core, desc + 112 + 16 * 8)[0])
    if name == b'MSIVM':
        cr3s.append(struct.unpack_from('<Q', core, desc + 16)[0])
    if name == b'QEMU' and typ == 0:
        # QEMUCPUState version 1: version, size, 16 GPRs, rip (136), rflags, 10 segments, cr[5] (392)
        ver, size = struct.unpack_from('<II', core, desc)
        qemu.append((ver, size, dsz, struct.unpack_from('<Q', core, desc + 136)[0],
                     struct.unpack_from('<Q', core, desc + 392 + 3 * 8)[0]))
    off = desc + ((dsz + 3) & ~3)
# the QEMU notes (what `crash` reads) agree with the other notes, one per vCPU
assert [(q[0], q[1], q[2]) for q in qemu] == [(1, 440, 440)] * len(rips), 'QEMU notes: %s' % qemu
assert [q[3] for q in qemu] == rips and [q[4] for q in qemu] == cr3s, 'QEMU notes disagree'
assert all(p[7] == 0 for p in loads), 'PT_LOAD p_align is not 0 (crash would not read a kdump core)'
pe = ehdr(probe)
text = [p for p in phdrs(probe, pe) if p[0] == 1][0]
lo, hi = text[4], text[4] + text[5]
assert all(lo <= r < hi for r in rips), 'rip outside the probe: %s' % [hex(r) for r in rips]
ram = sum(p[6] for p in loads)
seg = [p for p in loads if p[4] <= lo < p[4] + p[5]][0]
mine = core[seg[2] + lo - seg[4]:seg[2] + lo - seg[4] + 4096]
assert mine == probe[text[2]:text[2] + 4096], 'the code page differs from the probe file'
print('cpus=%d ram=%d rips=%s' % (len(rips), ram, ','.join(hex(r) for r in rips)))
PY
)
kib=$(du -k "$core" 2>/dev/null | cut -f1)
if [[ "$check" =~ ^cpus=2\ ram=268435456\  ]] && [ "${kib:-99999}" -lt 16384 ]; then
	pass "the core: $check, ${kib} KiB on disk"
else
	fail "the core: ${check:-not read} (${kib:-?} KiB on disk)"
fi
if jq -e '.end_reason == "the guest panicked (pvpanic)" and .transports[0].name == "rng0" and
	(.transports[0].queues[0].size > 0) and (.transports[0].msix.table | length) == 2' \
	"$json" >/dev/null 2>&1; then
	pass "the device view: end reason, rng0's queue and MSI-X table"
else
	fail "the device view $json: $(head -c 300 "$json" 2>/dev/null)"
fi

# A triple fault under --no-reboot is dumped too (the registers are the reset state on AMD, the
# RAM is the guest's); no --dump-on-crash, no dump; a directory that is not there is refused.
run run --kernel "$PROBE" --no-reboot --cmdline "power=triple" --dump-on-crash "$TMP/d"
expect "power=triple --no-reboot: 123 and a dump" 123 '' 'crash dump \(triple fault\)'
run run --kernel "$PROBE" --cmdline "power=panic"
if [ "$status" = 126 ] && ! grep -q 'crash dump' <<<"$err"; then
	pass "without --dump-on-crash a panic writes nothing"
else
	fail "without --dump-on-crash: status $status, stderr mentions a dump or files appeared"
fi
run run --kernel "$PROBE" --dump-on-crash "$TMP/missing"
expect "--dump-on-crash with a missing directory is refused" 125 '' "--dump-on-crash '.*missing': No such file or directory"
finish
