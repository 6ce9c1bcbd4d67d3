#!/usr/bin/env bash
# End-to-end: --serial tty|file=F|off; the guest reads typed lines from COM1 (a pipe, then a terminal).
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# From a pipe: no raw mode, no escape; the UART's 16-byte FIFO paces a long line. The lines go
# in once the probe says it reads (input that comes earlier waits for the guest's UART set-up,
# tested below).
long="a line much longer than the sixteen bytes of the receive fifo"
mkfifo "$TMP/in"
timeout 60 "$MSIVM" run --kernel "$PROBE" --serial tty --cmdline "echo exit=5" <"$TMP/in" >"$TMP/out" 2>"$TMP/err" &
pid=$!
exec 3>"$TMP/in"
for _ in $(seq 300); do grep -q '^probe: echo ready' "$TMP/out" && break; sleep 0.1; done
printf 'hello\n%s\nquit\n' "$long" >&3
exec 3>&-
wait "$pid"
status=$?
out=$(cat "$TMP/out")
err=$(cat "$TMP/err")
expect "--serial tty: lines piped in reach the guest, none lost" 5 "^probe: echo $long\$"

# Input given before the guest reads: a pipe written at once, then closed, a regular file and
# /dev/null (as under nohup or systemd): msivm holds it until the guest set its UART up (its
# FIFO clear would drop it), reads a file to its end then takes EOF, as a console's in= does.
printf 'early\nquit\n' | timeout "$E2E_TIMEOUT" "$MSIVM" run --kernel "$PROBE" --serial tty \
	--cmdline "echo exit=5" >"$TMP/out" 2>"$TMP/err"
status=${PIPESTATUS[1]} out=$(cat "$TMP/out") err=$(cat "$TMP/err")
expect "--serial tty: a pipe written before the guest set its UART up: nothing lost" 5 '^probe: echo early$'
printf 'fromfile\nquit\n' >"$TMP/input.txt"
run run --kernel "$PROBE" --serial tty --cmdline "echo exit=5" <"$TMP/input.txt"
expect "--serial tty with a regular file as input: read to its end" 5 '^probe: echo fromfile$'
run run --kernel "$PROBE" --serial tty --cmdline "exit=3" </dev/null
expect "--serial tty with /dev/null as input (no terminal): the guest runs" 3 '' '^$'

# On a terminal: raw mode, a typed line, Ctrl-a x, the terminal restored.
while read -r line; do
	case "$line" in
	"ok   - "*) pass "${line#ok   - }" ;;
	*) status=1; out=$line; err=""; fail "${line#FAIL - }" ;;
	esac
done < <(python3 "$here/serial_tty.py" "$MSIVM" "$PROBE" 2>&1)

run run --kernel "$PROBE" --serial off --cmdline "exit=3"
expect "--serial off: the guest runs, nothing printed" 3 '^$'
run run --kernel "$PROBE" --serial "file=$TMP/com1.txt" --cmdline "exit=4"
if [ "$status" = 4 ] && grep -q '^msivm-probe v0: cmdline="exit=4"$' "$TMP/com1.txt"; then
	pass "--serial file=FILE writes COM1 to the file"
else
	fail "--serial file=FILE writes COM1 to the file"
fi

# --serial socket=PATH: msivm waits for one client, which is COM1 both ways.
python3 "$here/sock_client.py" "$TMP/com1.sock" "probe: echo ready" 'over the socket\nquit\n' >"$TMP/sock.out" &
client=$!
run run --kernel "$PROBE" --serial "socket=$TMP/com1.sock" --cmdline "echo exit=6"
wait "$client"
out=$(cat "$TMP/sock.out")
expect "--serial socket=PATH: the client reads COM1 and types into it" 6 '^probe: echo over the socket'
[ ! -e "$TMP/com1.sock" ] && pass "--serial socket=PATH: the path is removed once the client is in" ||
	fail "--serial socket=PATH: the path is removed once the client is in"
touch "$TMP/busy"
run run --kernel "$PROBE" --serial "socket=$TMP/busy"
expect "--serial socket= on an existing path is refused" 125 "" "Address already in use"
run run --kernel "$PROBE" --serial "socket="
expect "--serial socket= without a path is refused" 125 "" "needs FILE, file=FILE, socket=PATH"

finish
