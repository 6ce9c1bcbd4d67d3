#!/usr/bin/env bash
# End-to-end: --serial tty|file=F|off; the guest reads typed lines from COM1 (a pipe, then a terminal).
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# From a pipe: no raw mode, no escape; the UART's 16-byte FIFO paces a long line.
long="a line much longer than the sixteen bytes of the receive fifo"
out=$( (sleep 0.3; printf 'hello\n%s\nquit\n' "$long") |
	timeout 20 "$MSIVM" run --kernel "$PROBE" --serial tty --cmdline "echo exit=5" 2>"$TMP/err")
status=$?
err=$(cat "$TMP/err")
expect "--serial tty: lines piped in reach the guest, none lost" 5 "^probe: echo $long\$"

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

finish
