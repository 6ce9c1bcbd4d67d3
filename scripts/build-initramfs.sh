#!/usr/bin/env bash
# build-initramfs.sh: Debian packages -> an initramfs that boots Linux, loads the virtio modules,
# shows /proc/interrupts, runs a short fio job on /dev/vda (and iperf3 when asked) and powers off.
#
#   scripts/build-initramfs.sh [OUT_DIR]     (default build/initramfs; needs root for apt-get)
#
# For hosts with hardware virtualization, where `msivm run --kernel OUT_DIR/vmlinuz
# --initrd OUT_DIR/initramfs.cpio.gz --disk path=IMG --net backend=tap,...` runs the lab's
# experiments on Linux. Leaves OUT_DIR/vmlinuz, OUT_DIR/initramfs.cpio.gz and OUT_DIR/contents.txt.
# The guest's init reads from the kernel command line: msivm.fio=SECONDS (default 5),
# msivm.iperf=SERVER_IP (skip when absent).
set -euo pipefail

out=${1:-build/initramfs}
meta=linux-image-cloud-amd64
modules=(virtio_pci virtio_blk virtio_net virtio_console virtio-rng)
die() { echo "build-initramfs: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (apt-get install of busybox-static, fio, iperf3)"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends busybox-static fio iperf3 cpio xz-utils kmod >/dev/null ||
	die "apt-get install failed"

pkg=$(apt-cache depends "$meta" | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
[ -n "$pkg" ] || die "cannot resolve the kernel package behind $meta"

mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
echo "build-initramfs: downloading $pkg" >&2
(cd "$work" && apt-get download -q "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
dpkg-deb -x "$work"/*.deb "$work/kernel"
ver=$(basename "$(ls -d "$work"/kernel/lib/modules/*)")
cp "$work/kernel/boot/vmlinuz-$ver" "$out/vmlinuz"

root="$work/root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,lib/modules/"$ver",usr/bin}
cp /bin/busybox "$root/bin/busybox"
for app in sh mount umount cat echo insmod poweroff sleep dmesg uptime grep ip ifconfig head; do
	ln -sf busybox "$root/bin/$app"
done

# Copies a binary and the shared libraries it links into the tree.
copy_with_libs() {
	install -D "$1" "$root$1"
	ldd "$1" | grep -oE '/[^ ]+\.so[^ ]*' | while read -r lib; do
		[ -e "$root$lib" ] || install -D "$(readlink -f "$lib")" "$root$lib"
	done
}
copy_with_libs "$(command -v fio)"
copy_with_libs "$(command -v iperf3)"

# Each module and what it depends on (modules.dep), decompressed, in load order.
moddir="$work/kernel/lib/modules/$ver"
depmod -b "$work/kernel" "$ver" || die "depmod failed" # the package ships no modules.dep
order=()
add_module() {
	local path dep
	path=$(find "$moddir" -name "$1.ko*" | head -n1)
	if [ -z "$path" ]; then
		grep -qE "/$1.ko" "$moddir/modules.builtin" 2>/dev/null && return 0
		echo "build-initramfs: module $1 not found (built in?)" >&2
		return 0
	fi
	local rel=${path#"$moddir"/}
	for dep in $(sed -n "s|^$rel: *||p" "$moddir/modules.dep"); do
		add_module "$(basename "${dep%%.ko*}")"
	done
	local name; name=$(basename "${path%%.ko*}")
	for m in "${order[@]:-}"; do [ "$m" = "$name" ] && return 0; done
	case "$path" in
	*.xz) xz -dc "$path" >"$root/lib/modules/$ver/$name.ko" ;;
	*.zst) zstd -dcq "$path" >"$root/lib/modules/$ver/$name.ko" ;;
	*) cp "$path" "$root/lib/modules/$ver/$name.ko" ;;
	esac
	order+=("$name")
}
for m in "${modules[@]}"; do add_module "$m"; done
printf '%s\n' "${order[@]}" >"$root/lib/modules/$ver/load-order"

cat >"$root/init" <<INIT
#!/bin/sh
# msivm guest init: boot time, virtio modules, interrupts, a short fio job, optional iperf3, power off.
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
echo "msivm-init: up after \$(cut -d' ' -f1 /proc/uptime) s"
for m in \$(cat /lib/modules/$ver/load-order); do insmod /lib/modules/$ver/\$m.ko 2>/dev/null; done
echo "msivm-init: virtio modules loaded after \$(cut -d' ' -f1 /proc/uptime) s"
cat /proc/interrupts
secs=5; server=
for a in \$(cat /proc/cmdline); do
	case "\$a" in msivm.fio=*) secs=\${a#msivm.fio=} ;; msivm.iperf=*) server=\${a#msivm.iperf=} ;; esac
done
if [ -b /dev/vda ]; then
	fio --name=randread --filename=/dev/vda --rw=randread --bs=4k --iodepth=4 \
		--ioengine=psync --direct=1 --runtime=\$secs --time_based --numjobs=1
fi
if [ -n "\$server" ]; then
	ip link set eth0 up; ip addr add 10.0.2.15/24 dev eth0
	iperf3 -c "\$server" -t "\$secs"
fi
cat /proc/interrupts
echo "msivm-init: done after \$(cut -d' ' -f1 /proc/uptime) s"
poweroff -f
INIT
chmod 755 "$root/init"

(cd "$root" && find . | sort | cpio -o -H newc --quiet | gzip -9) >"$out/initramfs.cpio.gz"
(cd "$root" && find . -type f | sort) >"$out/contents.txt"
echo "build-initramfs: $out/vmlinuz ($pkg), $out/initramfs.cpio.gz ($(du -h "$out/initramfs.cpio.gz" | cut -f1)), modules: ${order[*]}" >&2
