#!/usr/bin/env bash
# End-to-end: --disk option parsing, image checks (exit 125 with one clear line) and the virtio-blk device in --stats-json.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

jqv() { jq -r "$1" "$TMP/stats.json"; }
truncate -s 1M "$TMP/disk.img"
truncate -s 2M "$TMP/disk2.img"
truncate -s 1000 "$TMP/odd.img"

# --- user errors: status 125, one line naming the problem
run run --kernel "$PROBE" --disk "ro"
expect "--disk without path= is refused" 125 '' 'path=FILE is required'

run run --kernel "$PROBE" --disk "path=$TMP/disk.img,engine=aio"
expect "an unknown engine is refused" 125 '' "bad engine 'aio': use uring or sync"

run run --kernel "$PROBE" --disk "path=$TMP/missing.img"
expect "a missing image is refused" 125 '' "cannot open disk image '.*missing.img': No such file"

run run --kernel "$PROBE" --disk "path=$TMP/odd.img"
expect "an image not a multiple of 512 bytes is refused" 125 '' 'is 1000 bytes, not a multiple of 512'

run run --kernel "$PROBE" --disk "path=$TMP"
expect "a directory is refused" 125 '' 'Is a directory'

run run --kernel "$PROBE" --disk "path=$TMP/disk.img,queues=9"
expect "queues=9 is refused" 125 '' "bad queues '9': use 1 to 8"

run run --kernel "$PROBE" --disk "path=$TMP/disk.img,queues=0"
expect "queues=0 is refused" 125 '' "bad queues '0'"

run run --kernel "$PROBE" --disk "path=$TMP/disk.img,cache=none"
expect "an unknown disk option is refused" 125 '' "unknown device option 'cache=none'"

run run --kernel "$PROBE" --disk "path=$TMP/disk.img,irq=edge"
expect "a bad irq mode is refused" 125 '' "bad irq mode 'edge'"

run run --kernel "$PROBE" --disk "path=$TMP/disk.img" --disk "path=$TMP/disk.img,ro"
expect "the same image twice (one writer) is refused" 125 '' 'is in use'

# --- the device exists and is reported
rm -f "$TMP/stats.json"
run run --kernel "$PROBE" --cmdline "exit=0" --disk "path=$TMP/disk.img,queues=4" \
	--disk "path=$TMP/disk2.img,ro,engine=sync,irq=intx" --stats-json "$TMP/stats.json"
if [ "$status" = 0 ] && [ "$(jqv '.devices[0].type')" = blk ] &&
	[ "$(jqv '.devices[0].name')" = blk0 ] &&
	[ "$(jqv '.devices[0].vectors | length')" = 5 ] &&
	[ "$(jqv '.devices[0].requests')" = 0 ] &&
	[ "$(jqv '.devices[0].requests_by_type.in')" = 0 ] &&
	[ "$(jqv '.devices[1].name')" = blk1 ] &&
	[ "$(jqv '.devices[1].engine')" = sync ] &&
	[ "$(jqv '.devices[1].mode')" = intx ]; then
	pass "two disks: blk0 with 4 queues (5 MSI-X vectors), blk1 read-only, sync, INTx"
else
	fail "two disks: blk0 with 4 queues (5 MSI-X vectors), blk1 read-only, sync, INTx"
fi
engine=$(jqv '.devices[0].engine')
if [ "$engine" = uring ] || [ "$engine" = sync ]; then
	pass "the default engine is io_uring where it works, else sync ($engine)"
else
	fail "the default engine is io_uring where it works, else sync ($engine)"
fi

run run --kernel "$PROBE" --cmdline "exit=5" --disk "path=$TMP/disk.img" --stats
expect "--stats lists the disk's requests" 5 '' 'blk0: 0 requests \(in 0, out 0, flush 0'

# --- SIGUSR2: the images are measured again and a new size reaches the device; SIGWINCH (no
# terminal here) changes nothing; neither stops the VM. The guest reads entropy meanwhile.
truncate -s 1M "$TMP/grow.img"
"$MSIVM" run -v --kernel "$PROBE" --rng "" --cmdline "rng=32768" --disk "path=$TMP/grow.img" \
	>"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 100); do grep -q 'msivm-vcpu0' /proc/$pid/task/*/comm 2>/dev/null && break; sleep 0.05; done
sleep 0.3
truncate -s 3M "$TMP/grow.img"
kill -USR2 "$pid" 2>/dev/null
kill -WINCH "$pid" 2>/dev/null
for _ in $(seq 100); do grep -q 'disks changed size' "$TMP/err" && break; sleep 0.05; done
alive=no
kill -0 "$pid" 2>/dev/null && alive=yes
kill -TERM "$pid" 2>/dev/null
wait "$pid"
status=$?
out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
if [ "$alive" = yes ] && grep -q 'blk0: image size 1048576 -> 3145728 bytes' "$TMP/err" &&
	grep -q 'SIGUSR2: 1 of 1 disks changed size' "$TMP/err"; then
	pass "SIGUSR2 re-reads a grown image (blk0 1 MiB -> 3 MiB), SIGWINCH is harmless, the VM runs on"
else
	fail "SIGUSR2 re-reads a grown image (alive after the signals: $alive)"
fi
expect "SIGTERM still stops that VM with 143" 143

# Read-only images: one on a read-only file system is refused with the ,ro hint; one of mode
# 0444 that root opens read-write anyway is warned about (as QEMU, msivm does as told).
truncate -s 1M "$TMP/ro444.img" && chmod 0444 "$TMP/ro444.img"
run run --kernel "$PROBE" --disk "path=$TMP/ro444.img" --cmdline "exit=3"
if [ "$(id -u)" = 0 ]; then
	expect "a mode-0444 image opened read-write by root: a warning naming ,ro" 3 '' \
		"ro444.img' has mode 0444 \(nobody may write it\) but is opened read-write, as root may: add ,ro"
fi
run run --kernel "$PROBE" --disk "path=$TMP/ro444.img,ro" --cmdline "exit=3"
expect "... and with ,ro no warning" 3 '' '^$'
mkdir -p "$TMP/rofs"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=2m tmpfs "$TMP/rofs" 2>/dev/null; then
	truncate -s 1M "$TMP/rofs/d.img"
	mount -o remount,ro "$TMP/rofs"
	run run --kernel "$PROBE" --disk "path=$TMP/rofs/d.img" --cmdline "exit=3"
	expect "an image on a read-only file system: refused with the ,ro hint" 125 '' \
		"d.img': Read-only file system \(the file system is read-only: add ,ro to the disk"
	run run --kernel "$PROBE" --disk "path=$TMP/rofs/d.img,ro" --cmdline "exit=3"
	expect "... which then runs" 3
	umount "$TMP/rofs"
else
	echo "skip - an image on a read-only file system (needs root and mount)"
fi

finish
