#!/usr/bin/env bash
# End-to-end: --vsock: the device on the PCI bus, its unix socket made and removed, the probe's streams both ways in MSI-X and INTx, the option's refusals.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

sock=$TMP/v.sock
# The probe powers off right away; the socket must exist while msivm runs and be gone after.
run run --kernel "$PROBE" --vsock "cid=3,path=$sock" --stats
expect "--vsock: the probe sees a virtio-vsock function (1af4:1053), msivm counts it" 0 \
	'pci 00:01\.0 1af4:1053 class 078000' "vsock0: cid 3, $sock; connections 0 from the guest"
if [ ! -e "$sock" ]; then pass "the unix socket is removed when msivm ends"; else fail "$sock left behind"; fi

# A path that exists is not taken over (another VM may be listening on it).
: >"$sock"
run run --kernel "$PROBE" --vsock "cid=3,path=$sock"
expect "an existing path= is refused, and left alone" 125 '' "vsock0: cannot create the unix socket '.*v\.sock': Address already in use \(remove it first\)"
[ -f "$sock" ] && pass "the existing file is still there" || fail "the existing file was removed"
rm -f "$sock"

run run --kernel "$PROBE" --vsock "path=$sock"
expect "--vsock without cid= is refused" 125 '' "cid=N \(the guest's context id, 3 or more\) is required"
run run --kernel "$PROBE" --vsock "cid=2,path=$sock"
expect "cid=2 (the host's) is refused" 125 '' "bad cid '2': use 3 to 4294967294"
run run --kernel "$PROBE" --vsock "cid=3,path=$sock,backend=vhost"
expect "backend=vhost with path= is refused" 125 '' "path= is for backend=unix: with backend=vhost"
run run --kernel "$PROBE" --vsock "cid=3"
expect "backend=unix without path= is refused" 125 '' "path=P \(the host's unix socket\) is required with backend=unix"
# backend=vhost: the kernel's vhost-vsock (make check-linux moves data through it, in its own
# nested host). Without /dev/vhost-vsock msivm says what is missing; with it, the probe finds the
# device and msivm counts it as vhost's.
run run --kernel "$PROBE" --vsock "cid=3,backend=vhost" --stats
if [ -e /dev/vhost-vsock ]; then
	expect "backend=vhost: the probe sees the device, msivm hands it to vhost-vsock" 0 \
		'pci 00:01\.0 1af4:1053 class 078000' "vsock0: cid 3, vhost-vsock \(the kernel moves the data\)"
else
	expect "backend=vhost without /dev/vhost-vsock names the device and the module" 125 '' \
		"vsock0: backend=vhost: cannot open /dev/vhost-vsock: No such file or directory \(is the vhost_vsock module loaded\?"
fi
run run --kernel "$PROBE" --vsock "cid=3,path=$sock,bakend=unix"
expect "a misspelt key gets a suggestion" 125 '' "unknown device option 'bakend=unix' for --vsock; did you mean backend\?"

# The probe's streams through the device (vsock=5000): 64 KiB to the host's unix socket PATH_5000,
# then the host's "CONNECT 52" on PATH and 40000 bytes back, in MSI-X and INTx; each side's FNV-1a
# of the bytes must match the other's.
cat >"$TMP/host.py" <<'PY'
import os, socket, sys, time
path, out, log = sys.argv[1], sys.argv[2], sys.argv[3]
def fnv(data):
    h = 2166136261
    for x in data:
        h = ((h ^ x) * 16777619) & 0xffffffff
    return '%08x' % h
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path + '_5000')
srv.listen(1)
srv.settimeout(float(os.environ.get("E2E_TIMEOUT", "60")))
c, _ = srv.accept()
got = b''
while True:
    b = c.recv(65536)
    if not b:
        break
    got += b
c.close()
print('host got %d fnv=%s' % (len(got), fnv(got)), flush=True)
for _ in range(1200):  # the probe says when it listens (120 s)
    if 'probe: vsock listening 52' in open(log, errors='replace').read():
        break
    time.sleep(0.1)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
s.sendall(b'CONNECT 52\n')
line = b''
while not line.endswith(b'\n'):
    b = s.recv(1)
    if not b:
        break
    line += b
data = bytes((i * 7) & 0xff for i in range(40000))
s.sendall(data)
s.shutdown(socket.SHUT_WR)
s.recv(16)
print('answer %s sent %d fnv=%s' % (line.decode().strip(), len(data), fnv(data)), flush=True)
PY
for mode in msix intx; do
	rm -f "$sock" "${sock}_5000"
	: >"$TMP/out"
	timeout $((E2E_TIMEOUT * 2)) python3 "$TMP/host.py" "$sock" "$TMP/out" "$TMP/out" >"$TMP/host" 2>&1 &
	hp=$!
	for _ in $(seq 100); do [ -S "${sock}_5000" ] && break; sleep 0.05; done
	timeout $((E2E_TIMEOUT * 2)) "$MSIVM" run --kernel "$PROBE" --vsock "cid=9,path=$sock,irq=$mode" --stats \
		--cmdline "vsock=5000" >"$TMP/out" 2>"$TMP/err"
	status=$?
	wait $hp
	host=$(cat "$TMP/host")
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
	sent=$(sed -n 's/^probe: vsock sent 65536 bytes to port 5000 fnv=\(.*\)/\1/p' <<<"$out")
	recv=$(sed -n 's/^probe: vsock received 40000 bytes on port 52 fnv=\(.*\)/\1/p' <<<"$out")
	if [ "$status" = 0 ] && [ -n "$sent" ] && grep -q "host got 65536 fnv=$sent" <<<"$host" &&
		[ -n "$recv" ] && grep -q "answer OK [0-9]* sent 40000 fnv=$recv" <<<"$host" &&
		grep -q 'connections 1 from the guest, 1 from the host' <<<"$err"; then
		pass "irq=$mode: 64 KiB guest -> host port 5000 and 40000 bytes host -> guest port 52, FNV equal both ways"
	else
		fail "irq=$mode: streams (host: $(tr '\n' ';' <<<"$host"))"
	fi
done

# A guest reset rebuilds the device (its socket made again) under the process's seccomp filter.
rm -f "$sock"
"$MSIVM" run --kernel "$PROBE" --vsock "cid=3,path=$sock" --cmdline "power=kbd-reset" >"$TMP/out" 2>"$TMP/err" &
vm=$!
for _ in $(seq 300); do
	[ "$(grep -c '^msivm-probe v0:' "$TMP/out")" -ge 3 ] && break
	kill -0 $vm 2>/dev/null || break
	sleep 0.1
done
kill -TERM $vm 2>/dev/null
wait $vm
status=$?
out=$(cat "$TMP/out")
err=$(cat "$TMP/err")
boots=$(grep -c '^msivm-probe v0:' <<<"$out")
if [ "$status" = 143 ] && [ "$boots" -ge 3 ] && [ ! -e "$sock" ]; then
	pass "with --vsock the guest reboots in place ($boots boots, the socket made again each time, removed at the end)"
else
	fail "with --vsock a reboot: status $status, $boots boots$([ -e "$sock" ] && echo ', the socket left behind')"
fi

# The configuration file and --print-config know the device.
run run --kernel "$PROBE" --vsock "cid=7,path=$sock" --print-config
if jq -e --arg p "$sock" '.vsock[0].cid == 7 and .vsock[0].path == $p and .vsock[0].backend == "unix"' \
	<<<"$out" >/dev/null 2>&1; then
	pass "--print-config shows the vsock device"
else
	fail "--print-config: $(jq -c .vsock <<<"$out" 2>&1 | head -c 200)"
fi
finish
