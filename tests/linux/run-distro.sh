#!/bin/sh
# run-distro.sh: check-linux's distro configurations: boots the Debian image of scripts/build-rootfs.sh (with tests/linux/distro-check) under msivm or QEMU and checks what a distribution does.
#
#   run-distro.sh distro|qdistro      (distro: msivm, every device on MSI-X; qdistro: QEMU q35)
#   run-distro.sh --boots N [VARIANT...]   the boot-time experiment (below; variants: distro,
#                                     qdistro, distro-nomsi, qdistro-nomsi: the guest with pci=nomsi)
#   run-distro.sh --summary TALLY     that experiment's table from its tally lines
#
# Started by run-checks.sh (in the nested L1 or on a host with hardware KVM). The image is
# LC_DISTRO_DISK (default /dev/vdb: L1's second disk, a throwaway overlay of
# build/linux/distro/check.img); its kernel and initrd are read from its /boot. Three VMM
# processes, four boots (tests/linux/distro-check says what the guest does in each):
#   A: boot 1 (checks, `systemctl reboot`), boot 2 in the same process (the journal kept the
#      first boot; a file fsync'ed), then SIGKILL of the VMM
#   B: boot 3 (the fsync'ed file survived the kill and the journal's replay), then the power
#      button (msivm: SIGTERM; QEMU: system_powerdown): logind powers off, the VMM exits 0;
#      then `e2fsck -fn` of the image: clean
#   C: boot 4: root logs in on hvc0 through the console's unix socket and types
#      `systemctl poweroff`: the VMM exits 0; `e2fsck -fn` again
# Every process has a client on hvc0's socket from its start (msivm waits for one before booting).
# Results in LC_OUT/CFG/results.txt ("PASS name detail" / "FAIL name: why"), logs beside it.
# Environment: as run-checks.sh (LC_OUT, LC_WORK, LC_MSIVM, LC_QEMU, LC_QEMU_DATA, LC_VSK, LC_BB, LC_IP,
# LC_TAP, LC_NET), LC_DISTRO_DISK, LC_DISTRO_IMAGE (when set, a fresh sparse copy of it becomes
# LC_DISTRO_DISK first: direct runs), LC_DISTRO_TIMEOUT (seconds per boot, default 600).
set -u

# --summary TALLY: per variant, the mean and spread ((max-min)/2) of each boot figure over the boots
# that reached `running`, then the ratios msivm/QEMU and MSI-X/pci=nomsi of the means.
summary() {
	awk '
	function add(k, v) { n[k]++; s[k] += v; if (!(k in lo) || v < lo[k]) lo[k] = v; if (!(k in hi) || v > hi[k]) hi[k] = v }
	function mean(k) { return n[k] ? s[k] / n[k] : 0 }
	function cell(k) { return n[k] ? sprintf("%7.2f +- %-5.2f", mean(k), (hi[k] - lo[k]) / 2) : sprintf("%15s", "-") }
	{ runs[$1]++ } $4 == "running" { ok[$1]++; add($1 "/k", $5); add($1 "/u", $6); add($1 "/m", $7); add($1 "/w", $8) }
	END {
		printf "%-14s %-15s %-15s %-15s %-15s %s\n", "variant", "kernel s", "userspace s", "multi-user s", "wall s", "ok/boots"
		split("distro qdistro distro-nomsi qdistro-nomsi", order, " ")
		for (i = 1; i <= 4; i++) { v = order[i]; if (!(v in runs)) continue
			printf "%-14s %s %s %s %s %d/%d\n", v, cell(v "/k"), cell(v "/u"), cell(v "/m"), cell(v "/w"), ok[v], runs[v] }
		printf "ratios of the means (multi-user.target, guest clock; wall: VMM start to that line on the host)\n"
		r("msivm/QEMU, MSI-X", "distro", "qdistro"); r("msivm/QEMU, pci=nomsi", "distro-nomsi", "qdistro-nomsi")
		r("msivm, MSI-X/pci=nomsi", "distro", "distro-nomsi"); r("QEMU, MSI-X/pci=nomsi", "qdistro", "qdistro-nomsi")
	}
	function r(what, a, b) {
		if (n[a "/m"] && n[b "/m"] && mean(b "/m") > 0 && mean(b "/w") > 0)
			printf "  %-24s multi-user x%.3f   wall x%.3f\n", what, mean(a "/m") / mean(b "/m"), mean(a "/w") / mean(b "/w")
	}' "$1"
}
if [ "${1:-}" = --summary ]; then
	summary "$2"
	exit 0
fi
boots=
if [ "${1:-}" = --boots ]; then
	boots=$2
	shift 2
	variants=${*:-distro qdistro distro-nomsi qdistro-nomsi}
	set -- distro-boots
fi
cfg=$1
OUT=${LC_OUT:-/out}
WORK=${LC_WORK:-/work}
MSIVM=${LC_MSIVM:-/lc/msivm}
QEMU=${LC_QEMU:-qemu-system-x86_64}
QEMU_DATA=${LC_QEMU_DATA:-}
VSK=${LC_VSK:-vsk}
BB=${LC_BB:-busybox}
IP=${LC_IP:-ip}
TAP=${LC_TAP:-lctap0}
NET=${LC_NET:-10.0.2}
DISK=${LC_DISTRO_DISK:-/dev/vdb}
BOOT_TMO=${LC_DISTRO_TIMEOUT:-600}
case "$cfg" in
distro) vmm=msivm ;;
qdistro) vmm=qemu ;;
distro-boots) vmm= ;; # per variant below
*) echo "@@ run-distro: unknown configuration $cfg"; exit 2 ;;
esac
d=$OUT/$cfg
rm -rf "$d"
mkdir -p "$d" "$WORK"
: >"$d/results.txt"

up() { cut -d' ' -f1 /proc/uptime; }
T0=$(up)
el() { awk -v a="$(up)" -v b="$T0" 'BEGIN { printf "%.0f", a - b }'; }
stage() { echo "@@ [$(el)s] $*"; }
res() { # PASS|FAIL name detail
	if [ "$1" = PASS ]; then echo "PASS $2 $3" >>"$d/results.txt"; else echo "FAIL $2: $3" >>"$d/results.txt"; fi
}
cond() { if [ "$1" = 0 ]; then res PASS "$2" "$3"; else res FAIL "$2" "$3"; fi; }
# "lc: DATA KEY VALUE" from a console log
data() { tr -d '\r' <"$1" | sed -n "s/.*lc: DATA $2 \([^ ]*\).*/\1/p" | head -n1; }
seen() { tr -d '\r' <"$1" | grep -q "lc: $2"; }

vmm_pid= pids=
cleanup() {
	[ -n "$vmm_pid" ] && kill -KILL "$vmm_pid" 2>/dev/null
	for p in $pids; do kill "$p" 2>/dev/null; done
	$IP link del "$TAP" 2>/dev/null
	umount "$WORK/distro-mnt" 2>/dev/null
	return 0
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap 'cleanup' EXIT

if [ -n "${LC_DISTRO_IMAGE:-}" ]; then
	cp --sparse=always "$LC_DISTRO_IMAGE" "$DISK" 2>"$d/host.log" ||
		{ res FAIL distro.image "cannot copy $LC_DISTRO_IMAGE: $(cat "$d/host.log")"; exit 0; }
fi
# --- the image's own kernel and initrd (ext4 mounted read-only, without replaying its journal)
mkdir -p "$WORK/distro-mnt"
lo=
[ -b "$DISK" ] || lo=loop,
if ! mount -t ext4 -o "${lo}ro,noload" "$DISK" "$WORK/distro-mnt" 2>"$d/host.log"; then
	res FAIL distro.image "cannot mount $DISK: $(cat "$d/host.log")"
	stage "$cfg: 0 PASS, 1 FAIL"
	exit 0
fi
kernel=$(ls "$WORK"/distro-mnt/boot/vmlinuz-* 2>/dev/null | head -n1)
initrd=$(ls "$WORK"/distro-mnt/boot/initrd.img-* 2>/dev/null | head -n1)
ok=1
[ -n "$kernel" ] && [ -n "$initrd" ] && [ -x "$WORK/distro-mnt/usr/local/sbin/msivm-check" ] || ok=0
[ "$ok" = 1 ] && cp "$kernel" "$WORK/distro-vmlinuz" && cp "$initrd" "$WORK/distro-initrd"
umount "$WORK/distro-mnt"
if [ "$ok" != 1 ]; then
	res FAIL distro.image "$DISK has no /boot/vmlinuz-*, /boot/initrd.img-* or msivm-check (tests/linux/build.sh distro)"
	stage "$cfg: 0 PASS, 1 FAIL"
	exit 0
fi
res PASS distro.image "$(basename "$kernel"), $(basename "$initrd") ($(du -k "$WORK/distro-initrd" | cut -f1) KiB) from $DISK"

$IP link del "$TAP" 2>/dev/null
{ $IP tuntap add dev "$TAP" mode tap && $IP addr add "$NET.2/24" dev "$TAP" && $IP link set "$TAP" up; } \
	>>"$d/host.log" 2>&1 || stage "$cfg: tap setup failed: $(cat "$d/host.log")"

# quiet: under nested TCG every console byte is an exit; distro-check's lines are kernel errors
cmdline="console=ttyS0 root=/dev/vda ro quiet printk.devkmsg=on lc.distro"
hvc=$WORK/hvc.sock

# Starts the VMM for process $1 (a, b or c) in the background: vmm_pid, log files $d/$1.*
start_vmm() {
	p=$1
	rm -f "$hvc" "$WORK/mon.in" "$WORK/mon.out"
	: >"$d/$p.serial"
	if [ "$vmm" = msivm ]; then
		set -- "$MSIVM" run -v --kernel "$WORK/distro-vmlinuz" --initrd "$WORK/distro-initrd" \
			--cmdline "$cmdline" --mem 1G --cpus 2 --serial "$d/$p.serial" \
			--disk "path=$DISK,irq=msix" --net "backend=tap,ifname=$TAP,irq=msix" \
			--console "socket=$hvc,irq=msix" --rng irq=msix --stats --shutdown-timeout 60
	else
		mkfifo "$WORK/mon.in" "$WORK/mon.out"
		set -- "$QEMU" ${QEMU_DATA:+-L "$QEMU_DATA"} -enable-kvm -M q35 -cpu host -smp 2 -m 1G \
			-nodefaults -no-user-config -display none -serial "file:$d/$p.serial" \
			-monitor "pipe:$WORK/mon" -kernel "$WORK/distro-vmlinuz" -initrd "$WORK/distro-initrd" \
			-append "$cmdline" \
			-drive "file=$DISK,if=none,id=d0,format=raw,cache=none" -device virtio-blk-pci,drive=d0 \
			-netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no" -device virtio-net-pci,netdev=n0,romfile= \
			-device virtio-serial-pci,max_ports=1 -chardev "socket,id=c0,path=$hvc,server=on,wait=off" \
			-device virtconsole,chardev=c0 -device virtio-rng-pci
	fi
	printf '%s\n' "$*" >"$d/$p.cmd"
	stage "$cfg: process $p: boot $vmm"
	t_start=$(up)
	"$@" </dev/null >"$d/$p.out" 2>"$d/$p.err" &
	vmm_pid=$!
	# the guest's verdicts and progress as they come
	(tail -f "$d/$p.serial" 2>/dev/null |
		awk -v c="$cfg" '/lc: (CHECK|pass|power)/ { sub(/\r$/, ""); sub(/.*lc: /, "lc: "); print "  " c " | " $0; fflush() }') &
	live_pid=$!
	# hvc0's client, connected from the start (msivm waits for it before the guest boots): reads
	# the console to $d/$p.hvc; in process c it logs in and types `systemctl poweroff` (its
	# status in $d/c.chat-rc). The poweroff waits for distro-check's /run/lc-checked, written
	# once its running-4 is printed: waiting for the boot to finish and 5 s more was not enough on
	# a slow nested rig (distro-check's own systemctl calls took longer, two dry runs lost the check).
	if [ "$p" = c ]; then
		{ $VSK chat "$hvc" "$BOOT_TMO" "login:" root "assword:" msivm ":~#" "echo lc-login-\$((6*7))" \
			"lc-login-42" "for i in \$(seq $BOOT_TMO); do [ -e /run/lc-checked ] && break; sleep 1; done; systemctl poweroff" \
			>"$d/$p.hvc" 2>>"$d/host.log"; echo $? >"$d/c.chat-rc"; } &
	else
		$VSK chat "$hvc" "$BOOT_TMO" >"$d/$p.hvc" 2>>"$d/host.log" &
	fi
	chat_pid=$!
}

press_button() {
	if [ "$vmm" = msivm ]; then
		kill -TERM "$vmm_pid" 2>/dev/null
	else
		echo system_powerdown >"$WORK/mon.in"
		cat "$WORK/mon.out" >/dev/null 2>&1 &
		pids="$pids $!"
	fi
}

# Waits for the VMM of process $1 to exit within $2 s; on each look runs `step` (set by the
# caller: reacts to the guest's lines, may kill or press). Sets rc (124 on timeout) and secs.
wait_vmm() {
	p=$1 tmo=$2 t_note=$(up) rc=
	while kill -0 "$vmm_pid" 2>/dev/null; do
		step
		if awk -v a="$(up)" -v b="$t_note" 'BEGIN { exit !(a - b > 60) }'; then
			t_note=$(up)
			stage "$cfg: process $p running for $(awk -v a="$t_note" -v b="$t_start" 'BEGIN { printf "%.0f", a - b }')s; console: $(tr -d '\r' <"$d/$p.serial" | grep -v '^ *$' | tail -n1 | cut -c1-100)"
		fi
		if awk -v a="$(up)" -v b="$t_start" -v t="$tmo" 'BEGIN { exit !(a - b > t) }'; then
			stage "$cfg: process $p: timeout after ${tmo}s; console: $(tr -d '\r' <"$d/$p.serial" | grep -v '^ *$' | tail -n1 | cut -c1-100)"
			kill -KILL "$vmm_pid" 2>/dev/null
			wait "$vmm_pid" 2>/dev/null
			rc=124
			break
		fi
		sleep 0.2
	done
	if [ -z "$rc" ]; then
		wait "$vmm_pid"
		rc=$?
	fi
	vmm_pid=
	wait "$chat_pid" 2>/dev/null # the console's client ends with the VMM
	sleep 0.5
	pkill -P "$live_pid" 2>/dev/null # tail and awk, then their subshell
	kill "$live_pid" 2>/dev/null
	secs=$(awk -v a="$(up)" -v b="$t_start" 'BEGIN { printf "%.0f", a - b }')
	stage "$cfg: process $p: $vmm exited with status $rc after ${secs}s"
	# the guest's own verdicts, first one per name
	tr -d '\r' <"$d/$p.serial" | sed -n 's/.*lc: CHECK \([^ ]*\) \(PASS\|FAIL\) *\(.*\)$/\2 \1 \3/p' |
		awk '!seen[$2]++' | while read -r v n rest; do res "$v" "$n" "$rest"; done
}

fsck_clean() { # NAME WHEN
	out=$(e2fsck -fn "$DISK" 2>&1)
	r=$?
	echo "$out" >"$d/$1.log"
	cond $r "$1" "e2fsck -fn $2: status $r ($(echo "$out" | tail -n1))"
}

# --boots N: the boot-time experiment: N rounds, each booting every variant once (interleaved) to
# `running` and its poweroff (lc.distro=boot); one line per boot in $d/tally:
#   VARIANT ROUND STATUS STATE KERNEL_S USERSPACE_S MULTI_USER_S WALL_S
# (systemd's own monotonic timestamps; WALL_S: VMM start to the guest's line, on this host's clock)
if [ -n "$boots" ]; then
	: >"$d/tally"
	i=1
	while [ "$i" -le "$boots" ]; do
		for v in $variants; do
			case "$v" in
			distro | distro-nomsi) vmm=msivm ;;
			qdistro | qdistro-nomsi) vmm=qemu ;;
			*) stage "distro-boots: unknown variant $v"; exit 2 ;;
			esac
			cmdline="console=ttyS0 root=/dev/vda ro quiet printk.devkmsg=on lc.distro=boot"
			case "$v" in *-nomsi) cmdline="$cmdline pci=nomsi" ;; esac
			t_line=
			step() {
				if [ -z "$t_line" ] && seen "$d/$p.serial" 'DATA distro.boot '; then t_line=$(up); fi
			}
			start_vmm "$v-$i"
			wait_vmm "$v-$i" "$BOOT_TMO"
			b=$(data "$d/$p.serial" distro.boot)
			st=$(echo "$b" | sed -n 's/.*state=\([a-z]*\).*/\1/p')
			k=$(echo "$b" | sed -n 's/.*kernel_us=\([0-9]*\).*/\1/p')
			u=$(echo "$b" | sed -n 's/.*userspace_us=\([0-9]*\).*/\1/p')
			m=$(echo "$b" | sed -n 's/.*multi_user_us=\([0-9]*\).*/\1/p')
			w=$([ -n "$t_line" ] && awk -v a="$t_line" -v b="$t_start" 'BEGIN { printf "%.2f", a - b }' || echo -)
			line=$(awk -v v="$v" -v i="$i" -v rc="$rc" -v st="${st:-none}" -v k="${k:-0}" -v u="${u:-0}" -v m="${m:-0}" -v w="$w" \
				'BEGIN { printf "%s %d %s %s %.2f %.2f %.2f %s", v, i, rc, st, k / 1e6, u / 1e6, m / 1e6, w }')
			echo "$line" >>"$d/tally"
			stage "distro-boots: $line"
			rm -f "$d/$p.hvc" "$d/$p.out" # kept: the console, the command, stderr
		done
		i=$((i + 1))
	done
	summary "$d/tally" >"$d/report.txt"
	sed 's/^/@@ distro-boots | /' "$d/report.txt"
	exit 0
fi

# this host's wall clock for the guest's distro.clock: one line per TCP connection on port 5299
(while :; do $BB nc -l -p 5299 -e "$VSK" now </dev/null >/dev/null 2>&1 || sleep 1; done) &
clock_pid=$!
pids="$pids $clock_pid"

# --- A: boot 1, `systemctl reboot`, boot 2, SIGKILL
killed=
step() {
	if [ -z "$killed" ] && seen "$d/a.serial" 'power 2 kill wait'; then
		killed=1
		kill -KILL "$vmm_pid" 2>/dev/null
	fi
}
start_vmm a
wait_vmm a $((2 * BOOT_TMO))
a_rc=$rc
seen "$d/a.serial" 'pass 1 begin' && seen "$d/a.serial" 'pass 2 begin'
cond $? distro.reboot "systemctl reboot: the guest's second boot began in the same $vmm process ($(tr -d '\r' <"$d/a.serial" | grep -c 'lc: pass [0-9]* begin') boots seen)"
[ -n "$killed" ] && [ "$a_rc" = 137 ]
cond $? distro.sigkill "the VMM killed with SIGKILL once the file was fsync'ed: status $a_rc"
pkill -P "$clock_pid" 2>/dev/null
kill "$clock_pid" 2>/dev/null
clk=$(data "$d/a.serial" distro.clock)
off=$(echo "$clk" | sed -n 's/.*offset=\([-0-9.]*\).*/\1/p')
rtt=$(echo "$clk" | sed -n 's/.*rtt=\([0-9.]*\).*/\1/p')
if [ -n "$off" ]; then
	# The offset is the midpoint of the guest's two readings against the host's one, so it is
	# known to within half the round trip: a slow nested rig (a 5.9 s round trip in a CI dry run)
	# widens the bound by that much, never the 2 s the clocks may differ by.
	awk -v x="$off" -v r="${rtt:-0}" 'BEGIN { b = 2 + r / 2; exit !(x <= b && x >= -b) }'
	cond $? distro.clock "the guest's wall clock is $off s off this host's (at most 2 s plus half the round trip; $clk)"
else
	res FAIL distro.clock "the guest could not compare its clock: ${clk:-it printed nothing}"
fi
an=$(data "$d/a.serial" distro.analyze | tr '_' ' ')
mu=$(data "$d/a.serial" distro.target)
[ -n "$an" ]
cond $? distro.analyze "systemd-analyze: ${an:-nothing}; the default target after ${mu:-?} of userspace"
echo "$an" >"$d/analyze.txt"

# --- B: boot 3 after the kill, then the power button
pressed=
step() {
	if [ -z "$pressed" ] && seen "$d/b.serial" 'power 3 button wait'; then
		pressed=$(up)
		press_button
	fi
}
start_vmm b
wait_vmm b "$BOOT_TMO"
off=$([ -n "$pressed" ] && awk -v a="$(up)" -v b="$pressed" 'BEGIN { printf "%.0f", a - b }')
[ -n "$pressed" ] && [ "$rc" = 0 ] && tr -d '\r' <"$d/b.serial" | grep -q 'reboot: Power down'
cond $? distro.power-button "$([ -n "$pressed" ] && echo "pressed; $vmm exited with status $rc ${off}s later" || echo "never pressed (no 'power 3 button wait'); status $rc"), the kernel's 'reboot: Power down' $(tr -d '\r' <"$d/b.serial" | grep -q 'reboot: Power down' && echo seen || echo 'not seen')"
sha_w=$(data "$d/a.serial" distro.fsync-sha)
sha_r=$(data "$d/b.serial" distro.fsync-sha-after)
[ -n "$sha_w" ] && [ "$sha_w" = "$sha_r" ]
cond $? distro.fsync-file "the file fsync'ed before the SIGKILL read back after the next boot: $(echo "$sha_r" | cut -c1-12) (written $(echo "$sha_w" | cut -c1-12)); $(data "$d/b.serial" distro.recovery | tr '_' ' ')"
fsck_clean distro.fsck-after-kill "after the SIGKILL, the replay and a clean power-off"

# --- C: boot 4, a login on hvc0 (the console's client, started with the VMM) that types
# systemctl poweroff
step() { :; }
start_vmm c
wait_vmm c "$BOOT_TMO"
[ "$(cat "$d/c.chat-rc" 2>/dev/null)" = 0 ] && grep -q lc-login-42 "$d/c.hvc"
cond $? distro.hvc-login "root logged in on hvc0 through the console socket and ran a command: chat status $(cat "$d/c.chat-rc" 2>/dev/null || echo none), the command's output $(grep -q lc-login-42 "$d/c.hvc" && echo seen || echo 'not seen') ($(grep -c . "$d/c.hvc") lines read)"
[ "$rc" = 0 ] && tr -d '\r' <"$d/c.serial" | grep -q 'reboot: Power down'
cond $? distro.systemctl-poweroff "systemctl poweroff typed on hvc0: $vmm exited with status $rc"
fsck_clean distro.fsck-after-poweroff "after systemctl poweroff"

np=$(grep -c '^PASS' "$d/results.txt")
nf=$(grep -c '^FAIL' "$d/results.txt")
stage "$cfg: $np PASS, $nf FAIL"
[ "$nf" = 0 ] || grep '^FAIL' "$d/results.txt" | sed 's/^/  | /'
exit 0
