#!/usr/bin/env bash
# End-to-end: the probe writes, flushes, reads back and verifies a pattern on virtio-blk in every
# interrupt mode; the host then checks the image's exact hash. Read-only disks and QEMU too.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

KB=256
# expected_hash SEED: sha256 of an 8 MiB image whose first KB KiB hold the probe's pattern
# (each 8-byte little-endian word at offset off is off | seed << 56) and the rest zeros.
expected_hash() {
	{ perl -e '($k,$s)=@ARGV; print pack "Q<*", map { $_*8 | $s<<56 } 0..$k*128-1' "$KB" "$1"
	  head -c $((8 * 1024 * 1024 - KB * 1024)) /dev/zero; } | sha256sum | cut -d' ' -f1
}
img="$TMP/disk.img"

for mode in msix msix-shared msi intx; do
	seed=$((RANDOM % 200 + 1))
	rm -f "$img"; truncate -s 8M "$img"
	gargs="blk=verify,randread,seqwrite blkkb=$KB seed=$seed qd=4"
	[ "$mode" = msix-shared ] && gargs="$gargs irq=msix-shared"
	run run --kernel "$PROBE" --cmdline "$gargs" --disk "path=$img,irq=$mode" --stats-json "$TMP/s.json"
	got=$(sha256sum "$img" | cut -d' ' -f1)
	want=$(expected_hash "$seed")
	lvl=$(grep -oE 'probe: irq mode=[a-z-]+ total=[0-9]+ level=[0-9]+' <<<"$out" | grep -oE '[0-9]+$')
	# level-triggered interrupts: only, and always, under INTx
	lvl_ok=no
	if [ "$mode" = intx ]; then [ "${lvl:-0}" -ge 1 ] && lvl_ok=yes; else [ "${lvl:-1}" = 0 ] && lvl_ok=yes; fi
	if [ "$status" = 0 ] && grep -q "probe: blk verify ok bytes=$((KB * 1024))" <<<"$out" &&
		grep -q "probe: result blk-randread requests=" <<<"$out" && [ "$got" = "$want" ] &&
		[ "$lvl_ok" = yes ] &&
		[ "$(jq '.devices[0].ioerr' "$TMP/s.json")" = 0 ]; then
		pass "$mode: pattern written, flushed, read back and verified; image hash exact on the host"
	else
		fail "$mode: verify/hash (status=$status hash ok=$([ "$got" = "$want" ] && echo yes || echo no) level=$lvl)"
	fi
done

# io_uring and a filesystem that cannot write its page cache without blocking (ext4: RWF_NOWAIT
# gives EOPNOTSUPP): small writes run inline instead of in io_uring's workers, and the pattern
# still lands (the last msix run above used engine auto, i.e. io_uring).
nowait=$(python3 -c 'import os,sys
fd=os.open(sys.argv[1],os.O_RDWR); b=os.pread(fd,1,0)
try: os.pwritev(fd,[b],0,os.RWF_NOWAIT); print("yes")
except OSError as e: print("no" if e.errno==95 else "yes")' "$img")
run run --kernel "$PROBE" --cmdline "blk=verify blkkb=$KB seed=7 qd=4" --disk "path=$img,irq=msix,engine=uring" \
	--stats-json "$TMP/s.json"
want_inline=$([ "$nowait" = no ] && echo true || echo false)
if [ "$status" = 0 ] && grep -q "probe: blk verify ok bytes=$((KB * 1024))" <<<"$out" &&
	[ "$(jq -r '.devices[0].engine' "$TMP/s.json")" = uring ] &&
	[ "$(jq -r '.devices[0].inline_writes' "$TMP/s.json")" = "$want_inline" ]; then
	pass "engine=uring: writes inline exactly when the filesystem cannot write without blocking (here: $want_inline)"
else
	fail "engine=uring inline writes (status=$status nowait=$nowait stats=$(jq -c '.devices[0] | {engine, inline_writes}' "$TMP/s.json" 2>/dev/null))"
fi

# poll=: the I/O thread watches the rings after work with kicks off (the probe skips its kick
# when it sees NO_NOTIFY); a chain added as a window ends must not be lost (the run would hang),
# and the data must be exact. Hits depend on the guest's speed, so they are reported, not asserted.
rm -f "$img"; truncate -s 8M "$img"
run run --kernel "$PROBE" --cmdline "blk=verify,randread blkkb=$KB seed=9 qd=1" \
	--disk "path=$img,irq=msix,poll=1000" --stats-json "$TMP/s.json"
windows=$(jq '.devices[0].poll.windows' "$TMP/s.json" 2>/dev/null)
if [ "$status" = 0 ] && grep -q "probe: blk verify ok bytes=$((KB * 1024))" <<<"$out" &&
	[ "$(jq '.devices[0].poll.max_us' "$TMP/s.json")" = 1000 ] && [ "${windows:-0}" -ge 1 ]; then
	pass "poll=1000: verified data, $windows polling windows, $(jq '.devices[0].poll.hits' "$TMP/s.json") chains found by polling, $(jq '.devices[0].kicks' "$TMP/s.json") kicks"
else
	fail "poll=1000 (status=$status windows=${windows:-?})"
fi
run run --kernel "$PROBE" --disk "path=$img,poll=1001"
if [ "$status" = 125 ] && grep -q "bad poll '1001': use 0 to 1000 us" <<<"$err"; then
	pass "poll=1001 is refused, naming the range"
else
	fail "poll=1001 refusal (status=$status)"
fi

# Read-only: the guest's write gets IOERR and the file does not change.
rm -f "$img"; truncate -s 8M "$img"
printf 'precious' | dd of="$img" conv=notrunc status=none
before=$(sha256sum "$img" | cut -d' ' -f1)
run run --kernel "$PROBE" --cmdline "blk=rotest" --disk "path=$img,ro"
after=$(sha256sum "$img" | cut -d' ' -f1)
if [ "$status" = 0 ] && grep -q 'probe: blk ro write status=1' <<<"$out" && [ "$before" = "$after" ]; then
	pass "read-only disk: the guest's write gets IOERR and the file's hash is unchanged"
else
	fail "read-only disk (status=$status, unchanged=$([ "$before" = "$after" ] && echo yes || echo no))"
fi

# Without queues=, a disk has one request queue per vCPU (as QEMU's); queues= still decides.
rm -f "$img"; truncate -s 8M "$img"
run run --kernel "$PROBE" --cpus 2 --cmdline "blk=randread blkkb=64 blkops=16" --disk "path=$img"
q_auto=$(grep -oE 'probe: blk 00:01.0 capacity=[0-9]+ ro=0 queues=[0-9]+' <<<"$out" | grep -oE '[0-9]+$')
st_auto=$status
run run --kernel "$PROBE" --cpus 2 --cmdline "blk=randread blkkb=64 blkops=16" --disk "path=$img,queues=1"
q_one=$(grep -oE 'probe: blk 00:01.0 capacity=[0-9]+ ro=0 queues=[0-9]+' <<<"$out" | grep -oE '[0-9]+$')
if [ "$st_auto" = 0 ] && [ "$status" = 0 ] && [ "$q_auto" = 2 ] && [ "$q_one" = 1 ]; then
	pass "2 vCPUs: a disk gets 2 request queues by default, 1 with queues=1"
else
	fail "default queues per vCPU (status $st_auto/$status, queues ${q_auto:-?}/${q_one:-?})"
fi

# Multiqueue: one MSI-X vector per queue, all of them used.
rm -f "$img"; truncate -s 8M "$img"
run run --kernel "$PROBE" --cmdline "blk=randread blkkb=1024 blkops=256 qd=16" \
	--disk "path=$img,queues=4,irq=msix" --stats-json "$TMP/s.json"
used=$(jq '[.devices[0].vectors[] | select(.use | test("^q[0-9]")) | select(.delivered > 0)] | length' "$TMP/s.json")
if [ "$status" = 0 ] && [ "$used" = 4 ]; then
	pass "queues=4: four queue vectors, each one used"
else
	fail "queues=4: $used queue vectors used (status=$status)"
fi

# The same workload under QEMU (q35, aio=io_uring), where installed.
if command -v qemu-system-x86_64 >/dev/null; then
	for vec in "" ",vectors=0"; do
		rm -f "$img"; truncate -s 8M "$img"
		timeout 120 qemu-system-x86_64 -M q35 -enable-kvm -cpu host,-arch-capabilities -m 256M \
			-nodefaults -no-user-config -nographic -serial stdio -no-reboot \
			-kernel "$PROBE" -append "blk=verify,randread,seqwrite blkkb=$KB seed=9 qd=4" \
			-device isa-debug-exit,iobase=0xf4,iosize=4 \
			-drive "file=$img,if=none,id=d0,format=raw,aio=io_uring" \
			-device "virtio-blk-pci,drive=d0,disable-legacy=on$vec" >"$TMP/out" 2>"$TMP/err"
		status=$?; out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
		if [ "$status" = 1 ] && grep -q 'probe: blk verify ok' <<<"$out" &&
			[ "$(sha256sum "$img" | cut -d' ' -f1)" = "$(expected_hash 9)" ]; then
			pass "QEMU virtio-blk-pci${vec:- (msix)}: same workload verified, same image hash"
		else
			fail "QEMU virtio-blk-pci$vec"
		fi
	done
fi
finish
