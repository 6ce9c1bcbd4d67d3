#!/usr/bin/env bash
# End-to-end: --net option errors (exit 125), the NIC in --stats/--stats-json, a tap in a private network namespace, two instances joined by the socket backend.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# The probe has no network driver: these checks need none. A guest that reads
# 64 MiB of entropy runs long enough to look at the host side while it runs.
LONG_GUEST=(--kernel "$PROBE" --rng "" --cmdline "rng=65536")

jqv() { jq -r "$1" "$TMP/stats.json"; }

# check NAME CONDITION...: passes if every condition (a bash test) holds.
check() {
	local name=$1; shift
	for c in "$@"; do
		if ! eval "$c"; then fail "$name [$c]"; return; fi
	done
	pass "$name"
}

# wait_for CONDITION: up to 5 s.
wait_for() {
	for _ in $(seq 100); do
		eval "$1" && return 0
		sleep 0.05
	done
	return 1
}

# --- user errors: status 125, one line naming the problem
net_err() { # NAME OPTS REGEX
	run run --kernel "$PROBE" --net "$2"
	expect "$1" 125 '' "$3"
}
net_err "--net without backend= is refused" "queues=2" 'backend=tap, backend=vhost, backend=peer or backend=socket is required'
net_err "an unknown backend is refused" "backend=vde" "bad backend 'vde': use tap, vhost, peer or socket"
net_err "queues=0 is refused" "backend=peer,queues=0" "bad queues '0': use 1 to 7"
net_err "queues=8 is refused" "backend=peer,queues=8" "bad queues '8': use 1 to 7"
net_err "a multicast MAC is refused" "backend=peer,mac=01:00:5e:00:00:01" "bad mac '01:00:5e:00:00:01'"
net_err "a malformed MAC is refused" "backend=peer,mac=52:54:00:12:34" "bad mac '52:54:00:12:34'"
net_err "an all-zero MAC is refused" "backend=peer,mac=00:00:00:00:00:00" "bad mac"
net_err "a bad MTU is refused" "backend=peer,mtu=67" "bad mtu '67': use 68 to 65535"
net_err "ifname= with the peer is refused" "backend=peer,ifname=tap0" 'ifname= is for backend=tap and backend=vhost'
net_err "backend=vhost with two queue pairs is refused" "backend=vhost,queues=2" \
	'backend=vhost drives one queue pair: drop queues='
net_err "backend=vhost with poll= is refused" "backend=vhost,poll=50" \
	'poll=, coalesce=, bps= and ops= need msivm on the data path; backend=vhost leaves it to the kernel'
net_err "backend=vhost with bps= is refused" "backend=vhost,bps=10M" \
	'poll=, coalesce=, bps= and ops= need msivm on the data path'
net_err "backend=vhost with coalesce= is refused" "backend=vhost,coalesce=on" \
	'poll=, coalesce=, bps= and ops= need msivm on the data path'
net_err "tap= with the socket backend is refused" "tap=x,backend=socket" 'tap=NAME means backend=tap \(or vhost\)'
# Without the kernel's vhost-net (as on PVM hosts), backend=vhost says so and what to do.
if [ ! -e /dev/vhost-net ]; then
	net_err "backend=vhost without /dev/vhost-net is refused" "backend=vhost" \
		"backend=vhost: cannot open /dev/vhost-net: No such file or directory \\(is the vhost_net module loaded"
else
	echo "# skip: backend=vhost without /dev/vhost-net (this host has it; make check-linux runs vhost)"
fi
net_err "a long ifname is refused" "backend=tap,ifname=abcdefghijklmnop" "bad ifname 'abcdefghijklmnop'"
net_err "backend=socket without path= is refused" "backend=socket" 'backend=socket needs path=P'
net_err "path= with the tap is refused" "backend=tap,path=/tmp/x" 'path= is for backend=socket'
net_err "a bad peer mode is refused" "backend=peer,peer=mirror" "bad peer mode 'mirror': use responder, sink or source"
net_err "peer= with the tap is refused" "backend=tap,peer=sink" 'peer=, rate= and size= are for backend=peer'
net_err "rate= without peer=source is refused" "backend=peer,rate=100" 'rate= and size= need peer=source'
net_err "rate=0 is refused" "backend=peer,peer=source,rate=0" "bad rate '0'"
net_err "size=59 is refused" "backend=peer,peer=source,size=59" "bad size '59': use 60 to 1514 bytes"
net_err "a source frame larger than the MTU is refused" "backend=peer,peer=source,size=1514,mtu=1000" \
	'size= is larger than the MTU allows'
net_err "a bad irq mode is refused" "backend=peer,irq=edge" "bad irq mode 'edge'"
net_err "an unknown option is refused" "backend=peer,speed=10G" "unknown device option 'speed=10G'"
net_err "a socket path in a missing directory is refused" "backend=socket,path=$TMP/no/such/link" \
	"socket: cannot bind $TMP/no/such/link.0: No such file or directory"
# the PCI bus takes 31 devices (Firecracker's PCI mode: Kata's file alone asks for 11)
nets=()
for i in $(seq 32); do nets+=(--net "backend=peer"); done
run run --kernel "$PROBE" "${nets[@]}"
expect "a 32nd device is refused" 125 '' 'too many devices \(at most 31\)'

# --- the device exists and is reported
rm -f "$TMP/stats.json"
run run --kernel "$PROBE" --cmdline "exit=0" --net "backend=peer,queues=2" \
	--net "backend=peer,peer=source,rate=100,size=200,irq=intx,mac=02:00:00:00:00:01" \
	--stats-json "$TMP/stats.json"
check "two NICs: net0 with 2 queue pairs (6 MSI-X vectors), net1 a source on INTx" \
	'[ "$status" = 0 ]' \
	'grep -q "pci 00:01.0 1af4:1041 class 020000" <<<"$out"' \
	'[ "$(jqv ".devices[0].type")" = net ]' \
	'[ "$(jqv ".devices[0].name")" = net0 ]' \
	'[ "$(jqv ".devices[0].backend")" = peer ]' \
	'[ "$(jqv ".devices[0].attached")" = "peer responder" ]' \
	'[ "$(jqv ".devices[0].queue_pairs")" = 2 ]' \
	'[ "$(jqv ".devices[0].vectors | length")" = 6 ]' \
	'[ "$(jqv ".devices[0].tx_frames")" = 0 ]' \
	'[ "$(jqv ".devices[0].drops.tx_too_big")" = 0 ]' \
	'[ "$(jqv ".devices[0].drops.rx_too_big")" = 0 ]' \
	'[ "$(jqv ".devices[0].backend_stats.arp_replies")" = 0 ]' \
	'[ "$(jqv ".devices[1].name")" = net1 ]' \
	'[ "$(jqv ".devices[1].mode")" = intx ]' \
	'[ "$(jqv ".devices[1].attached")" = "peer source, 100 frames/s of 200 bytes" ]'

run run --kernel "$PROBE" --cmdline "exit=7" --net "backend=peer,peer=sink" --stats
expect "--stats lists the NIC, its drops and its backend" 7 '' \
	'net0: peer sink; tx 0 frames 0 bytes, rx 0 frames 0 bytes; drops tx_too_big 0'
if grep -q 'net0 backend: frames_in 0' <<<"$err"; then
	pass "--stats lists the backend's counters"
else
	fail "--stats lists the backend's counters"
fi

# --- the socket backend: two instances joined by one path, without privileges
LINK="$TMP/link"
"$MSIVM" run "${LONG_GUEST[@]}" --net "backend=socket,path=$LINK" --stats-json "$TMP/a.json" \
	>"$TMP/a.out" 2>"$TMP/a.err" &
pid_a=$!
wait_for '[ -S "$LINK.0" ]'
"$MSIVM" run "${LONG_GUEST[@]}" --net "backend=socket,path=$LINK" --stats-json "$TMP/b.json" \
	>"$TMP/b.out" 2>"$TMP/b.err" &
pid_b=$!
if wait_for '[ -S "$LINK.1" ]'; then
	pass "socket: the first instance binds P.0, the second P.1"
else
	fail "socket: the first instance binds P.0, the second P.1"
fi
run run --kernel "$PROBE" --net "backend=socket,path=$LINK"
expect "socket: a third instance is refused" 125 '' 'are both in use: two instances are already joined'
kill -TERM "$pid_a" "$pid_b" 2>/dev/null
wait "$pid_a"; st_a=$?
wait "$pid_b"; st_b=$?
status="$st_a/$st_b"; out=$(cat "$TMP/a.out"); err=$(cat "$TMP/a.err" "$TMP/b.err")
check "socket: both stop cleanly on SIGTERM, remove their socket files and report the link" \
	'[ "$st_a" = 143 ] && [ "$st_b" = 143 ]' \
	'[ ! -e "$LINK.0" ] && [ ! -e "$LINK.1" ]' \
	'[ "$(jq -r ".devices[1].attached" "$TMP/a.json")" = "socket $LINK.0 -> $LINK.1" ]' \
	'[ "$(jq -r ".devices[1].attached" "$TMP/b.json")" = "socket $LINK.1 -> $LINK.0" ]'

# --- the tap backend, in a network namespace of its own
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || [ ! -c /dev/net/tun ] ||
	! ip netns add "msivm-e2e-$$" 2>/dev/null; then
	echo "skip - tap checks need root, ip(8), /dev/net/tun and network namespaces"
	finish
	exit
fi
NS="msivm-e2e-$$"
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
in_ns() { ip netns exec "$NS" "$@"; }
link_up() { in_ns ip link show "$1" >/dev/null 2>&1; }

# Not through in_ns: `ip netns exec` execs msivm, so $! is msivm itself.
ip netns exec "$NS" "$MSIVM" run "${LONG_GUEST[@]}" --net "backend=tap,ifname=msivmt0" \
	--net "backend=tap,ifname=msivmt1,queues=2" >"$TMP/t.out" 2>"$TMP/t.err" &
pid=$!
wait_for 'link_up msivmt0 && link_up msivmt1'
details0=$(in_ns ip -d link show msivmt0 2>&1)
details1=$(in_ns ip -d link show msivmt1 2>&1)
kill -TERM "$pid" 2>/dev/null
wait "$pid"; status=$?
out=$(cat "$TMP/t.out"); err=$(cat "$TMP/t.err")
wait_for '! link_up msivmt0 && ! link_up msivmt1' # the kernel unregisters them a little later
check "tap: msivm creates its taps (one with 2 queues) and they go away with it" \
	'[ "$status" = 143 ]' \
	'grep -q "tun type tap" <<<"$details0"' \
	'grep -q "vnet_hdr on" <<<"$details0"' \
	'grep -q "multi_queue" <<<"$details1"' \
	'! link_up msivmt0 && ! link_up msivmt1'

in_ns ip tuntap add dev msivmp0 mode tap
rm -f "$TMP/stats.json"
status=$(in_ns "$MSIVM" run --kernel "$PROBE" --cmdline "exit=0" --net "backend=tap,ifname=msivmp0" \
	--stats-json "$TMP/stats.json" >/dev/null 2>&1; echo $?)
check "tap: an existing persistent tap is attached and stays" \
	'[ "$status" = 0 ]' \
	'[ "$(jqv ".devices[0].attached")" = "tap msivmp0" ]' \
	'link_up msivmp0'

status=$(in_ns "$MSIVM" run --kernel "$PROBE" --cmdline "exit=0" --net "backend=tap,ifname=msivmp0" \
	--net "backend=tap,ifname=msivmp0" 2>"$TMP/err" >/dev/null; echo $?)
err=$(cat "$TMP/err"); out=""
expect "tap: the same tap twice is refused" 125 '' "cannot attach to tap 'msivmp0': .*in use"

status=$(in_ns "$MSIVM" run --kernel "$PROBE" --cmdline "exit=0" --net "backend=tap" \
	--stats-json "$TMP/stats.json" >/dev/null 2>&1; echo $?)
check "tap: without ifname= the kernel names it" \
	'[ "$status" = 0 ]' \
	'[[ "$(jqv ".devices[0].attached")" =~ ^tap\ tap[0-9]+$ ]]'


# A snapshot restored with tap=NAME gets its own tap (clones of one snapshot each need one).
rm -f "$TMP/s.sock"
ip netns exec "$NS" "$MSIVM" run "${LONG_GUEST[@]}" --net "backend=tap,ifname=msivms0" \
	--api-socket "$TMP/s.sock" >/dev/null 2>"$TMP/s.err" &
pid=$!
wait_for 'link_up msivms0 && [ -S "$TMP/s.sock" ]'
"$MSIVM" remote --api-socket "$TMP/s.sock" snapshot --state "$TMP/t.state" --mem "$TMP/t.mem" \
	--paused >/dev/null 2>&1
snap=$?
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
wait_for '! link_up msivms0'
ip netns exec "$NS" "$MSIVM" run --restore "state=$TMP/t.state,mem=$TMP/t.mem,tap=msivms1" \
	--stats-json "$TMP/stats.json" >/dev/null 2>"$TMP/r.err" &
pid=$!
wait_for 'link_up msivms1'
up1=$(link_up msivms1 && echo yes) up0=$(link_up msivms0 && echo yes)
kill -TERM "$pid" 2>/dev/null
wait "$pid"; status=$?
out=""; err=$(cat "$TMP/s.err" "$TMP/r.err")
check "tap: a snapshot restored with tap=msivms1 runs on that tap, not on the snapshot's msivms0" \
	'[ "$snap" = 0 ]' '[ "$status" = 143 ]' '[ "$up1" = yes ]' '[ -z "$up0" ]' \
	'[ "$(jqv ".devices[1].attached")" = "tap msivms1" ]'
status=$(in_ns "$MSIVM" run --restore "state=$TMP/t.state,mem=$TMP/t.mem,tap=a,tap=b" 2>"$TMP/err" \
	>/dev/null; echo $?)
err=$(cat "$TMP/err"); out=""
expect "tap: more tap=NAME than the snapshot has tap NICs is refused" 125 '' \
	'gives 2 tap=NAME and the snapshot has 1 NIC on a tap'

finish
