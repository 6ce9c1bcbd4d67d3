#!/usr/bin/env bash
# End-to-end: the probe's virtio-net driver against msivm's peer in every interrupt mode, and a
# real client (the host's ping) reaching the probe over a tap in a network namespace.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

for mode in msix msix-shared msi intx; do
	gargs="net=ping,udp netn=8"
	[ "$mode" = msix-shared ] && gargs="$gargs irq=msix-shared"
	run run --kernel "$PROBE" --cmdline "$gargs" --net "backend=peer,irq=$mode" --stats-json "$TMP/s.json"
	ping_ok=$(grep -cE 'probe: result net-ping requests=8 .*bad=0' <<<"$out")
	udp_ok=$(grep -cE 'probe: result net-udp requests=8 bytes=[1-9][0-9]* .*bad=0' <<<"$out")
	lvl=$(grep -oE 'probe: irq mode=[a-z-]+ total=[0-9]+ level=[0-9]+' <<<"$out" | grep -oE '[0-9]+$')
	lvl_ok=no
	if [ "$mode" = intx ]; then [ "${lvl:-0}" -ge 1 ] && lvl_ok=yes; else [ "${lvl:-1}" = 0 ] && lvl_ok=yes; fi
	tx=$(jq '[.devices[] | select(.type=="net")][0].tx_frames // 0' "$TMP/s.json" 2>/dev/null)
	# msivm tells the guest its TSC frequency (CPUID 0x40000010): no assumed 2 GHz
	tsc_ok=$(grep -cE 'probe: net tsc [0-9]+ MHz \(cpuid 0x40000010\)' <<<"$out")
	if [ "$status" = 0 ] && [ "$ping_ok" = 1 ] && [ "$udp_ok" = 1 ] && [ "$lvl_ok" = yes ] &&
		[ "$tsc_ok" = 1 ]; then
		pass "$mode: 8 pings and 8 UDP echoes with the peer, contents verified by the guest"
	else
		fail "$mode: ping=$ping_ok udp=$udp_ok level=$lvl tsc=$tsc_ok tx=$tx"
	fi
done

# Two msivm guests joined by the socket backend: one serves (ARP, ICMP, UDP
# echo) as 10.0.2.2, the other pings it and sends UDP; no root needed.
sock="$TMP/link"
"$MSIVM" run --kernel "$PROBE" --net "backend=socket,path=$sock" \
	--cmdline "netip=10.0.2.2 net=serve netsecs=8" >"$TMP/srv" 2>&1 &
srv=$!
sleep 1
run run --kernel "$PROBE" --net "backend=socket,path=$sock" --cmdline "net=ping,udp netn=8"
wait "$srv"
srv_status=$?
if [ "$status" = 0 ] && [ "$srv_status" = 0 ] &&
	grep -qE 'probe: result net-ping requests=8 .*bad=0' <<<"$out" &&
	grep -qE 'probe: result net-udp requests=8 bytes=512 .*bad=0' <<<"$out" &&
	grep -q 'probe: net served 8 echo requests 8 udp echoes' "$TMP/srv"; then
	pass "two guests joined by the socket backend exchange ICMP and UDP echoes"
else
	fail "socket-joined guests (client $status, server $srv_status): $(grep 'net served' "$TMP/srv")"
fi

# The host's own ping reaches the probe through a tap in a namespace this test creates.
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v ping >/dev/null &&
	ip netns add msivm-e2e-$$ 2>/dev/null; then
	ns=msivm-e2e-$$
	ip netns exec "$ns" ip tuntap add dev tapm mode tap
	ip netns exec "$ns" ip addr add 10.0.2.2/24 dev tapm
	ip netns exec "$ns" ip link set tapm up
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" "$MSIVM" run --kernel "$PROBE" --cmdline "net=serve netsecs=8" \
		--net "backend=tap,ifname=tapm" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	sleep 1
	ip netns exec "$ns" ping -c 4 -i 0.3 -W 3 10.0.2.15 >"$TMP/ping" 2>&1
	pst=$?
	wait "$pid"
	status=$?
	out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
	ip netns del "$ns"
	served=$(grep -oE 'probe: net served [0-9]+' <<<"$out" | grep -oE '[0-9]+$')
	if [ "$pst" = 0 ] && grep -q ' 0% packet loss' "$TMP/ping" && [ "$status" = 0 ] &&
		[ "${served:-0}" -ge 4 ]; then
		pass "the host's ping reaches the probe over a tap: $(grep -oE '[0-9]+ received' "$TMP/ping"), guest answered ${served}"
	else
		fail "host ping over tap (ping status $pst, guest status $status, served ${served:-?}): $(tail -2 "$TMP/ping")"
	fi
else
	echo "skip - tap in a namespace needs root, ip and ping"
fi
finish
