#!/usr/bin/env bash
# End-to-end: hostile host input (FIFOs where files belong, over-long paths) is refused at once, by name.
set -u
here=$(dirname "$0")
. "$here/lib.sh"
E2E_TIMEOUT=10

mkfifo "$TMP/fifo"
# A FIFO used to block open() after SIGINT/SIGTERM were blocked: only SIGKILL ended msivm.
run run --kernel "$TMP/fifo"
expect "a FIFO as --kernel is refused, not waited on" 125 '' "kernel '.*fifo' is not a regular file"
run run --kernel "$PROBE" --initrd "$TMP/fifo"
expect "a FIFO as --initrd is refused, not waited on" 125 '' "initrd '.*fifo' is not a regular file"
run run --kernel "$PROBE" --console "out=$TMP/fifo"
expect "a FIFO without a reader as --console out= is refused" 125 '' 'a FIFO with no reader'
# ...while a FIFO with a reader is a fine console.
# (fd 3 holds both ends, so the reader exists before msivm opens it; the pipe buffers the output)
exec 3<>"$TMP/fifo"
run run --kernel "$PROBE" --console "out=$TMP/fifo" --cmdline "console=virtio rng=0"
timeout 1 cat <&3 >"$TMP/fifo.out"
exec 3<&-
if [ "$status" = 0 ] && grep -q 'probe: irq mode' "$TMP/fifo.out"; then
	pass "a FIFO with a reader receives the virtio-console output"
else
	fail "a FIFO with a reader receives the virtio-console output"
fi

# A --disk path longer than PATH_MAX used to be cut at 4095 bytes and the cut path opened.
long=$(printf 'd%.0s' $(seq 1 4200))
run run --kernel "$PROBE" --disk "path=$long"
expect "a --disk path longer than 4095 bytes is refused, not truncated" 125 '' 'longer than 4095 bytes'

# --seccomp: every mode runs the probe; a bad mode is named. (A sanitizer build's leak check
# at exit needs calls no filter allows: there only log and off.)
modes="on log off"
if "$MSIVM" --version | grep -q 'sanitizer build'; then
	modes="log off"
	echo "skip - --seccomp on with a sanitizer build (LeakSanitizer needs ptrace at exit)"
fi
for m in $modes; do
	run run --kernel "$PROBE" --rng "" --seccomp "$m" --cmdline "rng=4"
	expect "--seccomp $m runs a guest with a device" 0 'probe: rng read 4096 bytes'
done
run run --kernel "$PROBE" --seccomp strict
expect "--seccomp strict is refused" 125 '' "bad --seccomp 'strict'"

finish
