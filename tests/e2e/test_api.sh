#!/usr/bin/env bash
# End-to-end: the API socket (--api-socket, msivm remote): pause stops the guest and resume lets it
# go on, power-button, metrics that rise, reboot, shutdown, malformed and oversized requests, and
# another user refused.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

SOCK=$TMP/api.sock
remote() { "$MSIVM" remote --api-socket "$SOCK" "$@"; }
# wait_for REGEX [TENTHS]: until $TMP/vm.out matches (default 20 s); returns 1 on timeout.
wait_for() {
	local i=0
	while ! grep -Eq -- "$1" "$TMP/vm.out"; do
		[ $i -ge "${2:-200}" ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}
# raw REQUEST: sends REQUEST bytes (printf escapes) on the socket; prints the status line.
raw() {
	python3 - "$SOCK" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(5)
data = b""
try:  # the server may answer and close before it has read everything (431, 413)
    s.sendall(sys.argv[2].encode().decode('unicode_escape').encode('latin-1'))
except OSError:
    pass
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
except OSError:
    pass
print(data.split(b"\r\n", 1)[0].decode(errors="replace") or "closed")
PY
}
# The echo probe reads COM1 from our FIFO (kept open on fd 3) and prints each line back.
mkfifo "$TMP/in"
: >"$TMP/vm.out"
"$MSIVM" run --kernel "$PROBE" --serial tty --api-socket "$SOCK" --cmdline "echo exit=5" \
	<"$TMP/in" >"$TMP/vm.out" 2>"$TMP/vm.err" &
vm=$!
exec 3>"$TMP/in"
status=0 out="" err=""
if ! wait_for '^probe: echo ready'; then
	out=$(cat "$TMP/vm.out") err=$(cat "$TMP/vm.err")
	fail "the echo probe came up with --api-socket"
fi
mode=$(stat -c %a "$SOCK" 2>/dev/null)
[ "$mode" = 600 ] && pass "the API socket is created with mode 0600" || fail "the API socket is created with mode 0600 (mode $mode)"

out=$(remote info); status=$?
expect "GET /vm: running, boot 1" 0 '"state":"running","boot":1'
cfg=$(jq -c '.config | {kernel, serial, "api-socket"}' <<<"$out" 2>/dev/null)
want=$(jq -nc --arg k "$PROBE" --arg s "$SOCK" '{kernel: $k, serial: "tty", "api-socket": $s}')
[ "$cfg" = "$want" ] && pass "GET /vm carries the effective configuration (--print-config's)" ||
	fail "GET /vm carries the effective configuration (got $cfg, want $want)"
m1=$(remote metrics | jq '.exits.msivm_io')
echo one >&3
wait_for '^probe: echo one$' 50 && m2=$(remote metrics | jq '.exits.msivm_io')
if [ -n "${m2:-}" ] && [ "$m2" -gt "$m1" ]; then
	pass "GET /metrics: userspace I/O exits rise while the guest reads a line ($m1 -> $m2)"
else
	fail "GET /metrics: userspace I/O exits rise while the guest reads a line ($m1 -> ${m2:-none})"
fi

out=$(remote pause); status=$?
expect "PUT /vm/pause" 0 '"result":"paused"'
out=$(remote info); status=$?
expect "GET /vm says paused" 0 '"state":"paused"'
echo two >&3
sleep 1.5
if grep -q '^probe: echo two$' "$TMP/vm.out"; then
	fail "a paused guest makes no progress (it echoed a line sent while paused)"
else
	pass "a paused guest makes no progress (no echo of a line sent while paused, 1.5 s)"
fi
out=$(remote pause 2>&1); status=$?
expect "a second pause is refused (409)" 1 '"error":"the VM is paused already"' 
out=$(remote resume); status=$?
expect "PUT /vm/resume" 0 '"result":"resumed"'
wait_for '^probe: echo two$' 50 && pass "the resumed guest goes on: the line sent while paused is echoed" ||
	fail "the resumed guest goes on: the line sent while paused is echoed"

out=$(remote power-button 2>&1); status=$?
expect "power-button for a guest that never enabled it: 409, the VM keeps running" 1 \
	'does not listen for its power button'

out=$(remote dump 2>&1); status=$?
expect "dump without --dump-on-crash: 409 naming the option, the VM keeps running" 1 \
	'no dump directory: start msivm with --dump-on-crash DIR'

# Malformed and oversized requests: 4xx, and the server still answers.
s=$(raw 'PUT /vm/pause HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\nConnection: close\r\n\r\n')
[[ "$s" == "HTTP/1.1 400"* ]] && pass "a malformed Content-Length gets 400" || fail "a malformed Content-Length gets 400 (got '$s')"
s=$(raw 'GET /vm HTTP/1.1\r\nHost: x\r\nNoColonHere\r\nConnection: close\r\n\r\n')
[[ "$s" == "HTTP/1.1 400"* ]] && pass "a header line without a colon gets 400" || fail "a header line without a colon gets 400 (got '$s')"
s=$(raw 'GET /vm HTTP/9.9\r\nHost: x\r\nConnection: close\r\n\r\n')
[[ "$s" == "HTTP/1.1 505"* ]] && pass "an unknown HTTP version gets 505" || fail "an unknown HTTP version gets 505 (got '$s')"
s=$(raw 'GARBAGE\r\n\r\n')
[ "$s" = closed ] && pass "a request line that is no HTTP is dropped (connection closed)" || fail "a request line that is no HTTP is dropped (got '$s')"
s=$(raw 'GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
[[ "$s" == "HTTP/1.1 404"* ]] && pass "an unknown path gets 404" || fail "an unknown path gets 404 (got '$s')"
s=$(raw 'GET /vm/pause HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
[[ "$s" == "HTTP/1.1 405"* ]] && pass "GET on a PUT path gets 405" || fail "GET on a PUT path gets 405 (got '$s')"
body=$(head -c 9000 /dev/zero | tr '\0' 'x')
s=$(raw "PUT /vm/pause HTTP/1.1\r\nHost: x\r\nContent-Length: 9000\r\nConnection: close\r\n\r\n$body")
[[ "$s" == "HTTP/1.1 413"* ]] && pass "a 9000-byte body gets 413" || fail "a 9000-byte body gets 413 (got '$s')"
hdr=$(head -c 40000 /dev/zero | tr '\0' 'y')
s=$(raw "GET /vm HTTP/1.1\r\nHost: x\r\nX-Big: $hdr\r\nConnection: close\r\n\r\n")
[[ "$s" == "HTTP/1.1 431"* ]] && pass "40 KB of headers get 431" || fail "40 KB of headers get 431 (got '$s')"
out=$(remote info); status=$?
expect "the API still answers after the bad requests" 0 '"state":"running"'

# Another user: the 0600 socket refuses the connection; with the mode opened up, msivm's own check
# (SO_PEERCRED) answers 403.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MSIVM" remote --api-socket "$SOCK" info 2>&1)
	status=$?
	expect "another user cannot connect to the 0600 socket" 125 'Permission denied'
	chmod 711 "$TMP"
	chmod 666 "$SOCK"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MSIVM" remote --api-socket "$SOCK" pause 2>&1)
	status=$?
	expect "another user is refused by msivm itself (403) even on an open socket" 1 'uid 65534 may not use'
	chmod 600 "$SOCK"
	chmod 700 "$TMP"
else
	echo "skip - another user's access (needs root and setpriv)"
fi

out=$(remote reboot); status=$?
expect "PUT /vm/reboot" 0 '"result":"rebooting"'
i=0
while [ "$(grep -c '^probe: echo ready' "$TMP/vm.out")" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
out=$(remote info); status=$?
expect "after the reboot the guest runs again: boot 2" 0 '"boot":2'

out=$(remote shutdown); status=$?
expect "PUT /vm/shutdown" 0 '"result":"stopping"'
exec 3>&-
i=0
while kill -0 "$vm" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL "$vm" 2>/dev/null
wait "$vm"
status=$? out=$(cat "$TMP/vm.out") err=$(cat "$TMP/vm.err")
if [ "$status" = 0 ] && [ ! -e "$SOCK" ]; then
	pass "shutdown over the API ends msivm with 0 and removes the socket"
else
	fail "shutdown over the API ends msivm with 0 and removes the socket"
fi

# The power button over the API, to a guest that listens: it powers off.
: >"$TMP/vm.out"
"$MSIVM" run --kernel "$PROBE" --api-socket "$SOCK" --cmdline "button=off exit=9" >"$TMP/vm.out" 2>"$TMP/vm.err" &
vm=$!
wait_for 'waiting for the power button'
out=$(remote power-button); status=$?
expect "PUT /vm/power-button to a listening guest" 0 '"result":"pressed"'
wait "$vm"
status=$? out=$(cat "$TMP/vm.out") err=$(cat "$TMP/vm.err")
expect "the guest powers off on the API's power button: exit 0" 0 '^probe: power button pressed'

run run --kernel "$PROBE" --api-socket "$TMP/no/such/dir/api.sock"
expect "an API socket in a missing directory is refused" 125 "" "api.sock': No such file or directory"
touch "$TMP/taken"
run run --kernel "$PROBE" --api-socket "$TMP/taken"
expect "an existing path is not replaced" 125 "" "Address already in use \(a file that is not a socket"
# The socket of a running VM: a second VM is told that something answers on it (not to remove it),
# and the first VM keeps its API; a socket nobody listens on is called stale.
"$MSIVM" run --kernel "$PROBE" --api-socket "$TMP/live.sock" --cmdline "button=off exit=9" \
	>"$TMP/vm.out" 2>"$TMP/vm.err" &
vm=$!
wait_for 'waiting for the power button'
run run --kernel "$PROBE" --api-socket "$TMP/live.sock"
expect "a running VM's API socket: refused, 'another process answers on it'" 125 "" \
	"live.sock': Address already in use: another process answers on it \(a running VM\?\): give another path"
out=$("$MSIVM" remote --api-socket "$TMP/live.sock" power-button); status=$?
expect "... and the first VM still answers on it" 0 '"result":"pressed"'
wait "$vm"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TMP/stale.sock"
run run --kernel "$PROBE" --api-socket "$TMP/stale.sock"
expect "a stale API socket (nothing listens): refused, called stale" 125 "" \
	"stale.sock': Address already in use: a stale socket, nothing answers on it: remove it"
run remote --api-socket "$TMP/nothing.sock" info
expect "msivm remote names a socket nobody serves" 125 "" "cannot connect to .*nothing.sock"
run remote info
expect "msivm remote without --api-socket" 125 "" "--api-socket PATH is required"
run remote --api-socket "$SOCK" --timeout soon info
expect "msivm remote with a bad --timeout" 125 "" "bad --timeout 'soon'"

# A msivm that stopped answering: a socket that accepts and never replies. msivm remote must give
# up after --timeout with its own status (124) and say so, not wait for ever.
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen()
c = s.accept(); time.sleep(30)' "$TMP/mute.sock" &
mute=$!
for _ in $(seq 50); do [ -S "$TMP/mute.sock" ] && break; sleep 0.05; done
t0=$(date +%s%N)
run remote --api-socket "$TMP/mute.sock" --timeout 1 info
ms=$((($(date +%s%N) - t0) / 1000000))
kill "$mute" 2>/dev/null; wait "$mute" 2>/dev/null
if [ "$ms" -lt 5000 ]; then
	expect "msivm remote --timeout 1 against a mute API: 124 after ${ms} ms" 124 "" "no reply within 1 s"
else
	fail "msivm remote --timeout 1 against a mute API took ${ms} ms"
fi

finish
