#!/usr/bin/env bash
# End-to-end: --vsock: the device on the PCI bus, its unix socket made and removed, the option's refusals (the data path is unit-tested and checked with Linux by check-linux).
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
expect "backend=vhost says it is not built yet" 125 '' "backend=vhost .* is not built yet"
run run --kernel "$PROBE" --vsock "cid=3,path=$sock,bakend=unix"
expect "a misspelt key gets a suggestion" 125 '' "unknown device option 'bakend=unix' for --vsock; did you mean backend\?"

# The configuration file and --print-config know the device.
run run --kernel "$PROBE" --vsock "cid=7,path=$sock" --print-config
if jq -e --arg p "$sock" '.vsock[0].cid == 7 and .vsock[0].path == $p and .vsock[0].backend == "unix"' \
	<<<"$out" >/dev/null 2>&1; then
	pass "--print-config shows the vsock device"
else
	fail "--print-config: $(jq -c .vsock <<<"$out" 2>&1 | head -c 200)"
fi
finish
