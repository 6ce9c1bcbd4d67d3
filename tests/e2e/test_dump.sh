#!/usr/bin/env bash
# End-to-end: pvpanic and --dump-on-crash: a guest that panics ends msivm with 126 and leaves an ELF core (RAM, every vCPU's registers) and msivm's device view; the API's dump does the same on request, the guest going on after.
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
# On request (PUT /vm/dump, msivm remote dump): a running echo guest is paused for the dump and
# goes on after; a paused one stays paused. Each dump is a core with a CORE note per vCPU and
# the device view.
mkdir -p "$TMP/a"
mkfifo "$TMP/in"
: >"$TMP/vm.out"
"$MSIVM" run --kernel "$PROBE" --cpus 2 --serial tty --api-socket "$TMP/api.sock" \
	--dump-on-crash "$TMP/a" --cmdline "smp echo exit=5" <"$TMP/in" >"$TMP/vm.out" 2>"$TMP/vm.err" &
vm=$!
exec 3>"$TMP/in"
wait_out() { # REGEX: until $TMP/vm.out matches (20 s)
	local i=0
	while ! grep -Eq -- "$1" "$TMP/vm.out"; do
		[ $i -ge 200 ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}
notes() { # CORE: the number of NT_PRSTATUS notes of an x86-64 ELF core, else 0
	python3 - "$1" <<'PY' 2>/dev/null || echo 0
import struct, sys
b = open(sys.argv[1], 'rb').read()
e = struct.unpack_from('<16sHHIQQQIHHHHHH', b, 0)
assert e[0][:4] == b'\x7fELF' and e[1] == 4 and e[2] == 62
n = 0
for i in range(e[10]):
    p = struct.unpack_from('<IIQQQQQQ', b, e[5] + i * e[9])
    off, end = p[2], p[2] + p[5]
    while p[0] == 4 and off < end:
        nsz, dsz, typ = struct.unpack_from('<III', b, off)
        n += b[off + 12:off + 11 + nsz] == b'CORE' and typ == 1
        off += 12 + ((nsz + 3) & ~3) + ((dsz + 3) & ~3)
print(n)
PY
}
if wait_out '^probe: echo ready'; then
	out=$("$MSIVM" remote --api-socket "$TMP/api.sock" dump); status=$?
	c1=$(jq -r .core <<<"$out" 2>/dev/null)
	echo one >&3
	if [ "$status" = 0 ] && jq -e '.paused_for_it == true' <<<"$out" >/dev/null 2>&1 &&
		[ "$(notes "$TMP/a/$c1")" = 2 ] && [ -s "$TMP/a/${c1%.core}.json" ] &&
		wait_out '^probe: echo one$'; then
		pass "remote dump on a running guest: $c1 with 2 CORE notes and its device view; the guest echoes after it"
	else
		fail "remote dump on a running guest: status $status, reply '$out', files: $(ls "$TMP/a" | tr '\n' ' ')"
	fi
	"$MSIVM" remote --api-socket "$TMP/api.sock" pause >/dev/null
	out=$("$MSIVM" remote --api-socket "$TMP/api.sock" dump); status=$?
	state=$("$MSIVM" remote --api-socket "$TMP/api.sock" info | jq -r .state)
	if [ "$status" = 0 ] && jq -e '.paused_for_it == false' <<<"$out" >/dev/null 2>&1 &&
		[ "$state" = paused ] && [ "$(ls "$TMP/a"/*.core | wc -l)" = 2 ]; then
		pass "remote dump on a paused guest: a second core, the guest still paused"
	else
		fail "remote dump on a paused guest: status $status, reply '$out', state $state"
	fi
	"$MSIVM" remote --api-socket "$TMP/api.sock" resume >/dev/null
else
	fail "the echo probe came up with --api-socket and --dump-on-crash ($(tail -n 2 "$TMP/vm.err"))"
fi
echo quit >&3 # the echo probe's end
exec 3>&-
wait "$vm"
st=$?
grep -q 'SIGSYS\|seccomp' "$TMP/vm.err" && fail "seccomp stopped a thread: $(grep -m1 'SIGSYS\|seccomp' "$TMP/vm.err")"
[ "$st" = 5 ] && pass "the guest ended as it meant to (exit=5) after the dumps" || fail "the guest's end after the dumps: status $st ($(tail -n 2 "$TMP/vm.err"))"

run run --kernel "$PROBE" --dump-on-crash "$TMP/missing"
expect "--dump-on-crash with a missing directory is refused" 125 '' "--dump-on-crash '.*missing': No such file or directory"
finish
