#!/usr/bin/env bash
# build-rootfs.sh: a Debian 12 root filesystem (debootstrap, systemd, networkd, gettys, fio, the cloud kernel with its own initramfs) in a sparse ext4 image; cached.
#
#   scripts/build-rootfs.sh [OUT_DIR]     (default build/rootfs; needs root)
#
# Leaves OUT_DIR/debian.img (ext4 over the whole image, no partition table: root=/dev/vda; 4 GiB
# apparent, sparse), OUT_DIR/vmlinuz and OUT_DIR/initrd.img (Debian's cloud kernel and the
# initramfs initramfs-tools made for it inside the image, with the virtio modules), and
# OUT_DIR/stamp. A second run with the same script finds the stamp and does nothing.
#
# The guest: hostname msivm-debian; root's password "msivm" (a test image: change it for
# anything else); systemd-networkd gives the first NIC 10.0.2.15/24, gateway 10.0.2.2 (the
# host's end of a tap set up as in the README); a getty on ttyS0 and on hvc0; a persistent
# journal. Boot it with
#   msivm run --kernel OUT_DIR/vmlinuz --initrd OUT_DIR/initrd.img --mem 1G --cpus 2 \
#     --cmdline "console=ttyS0 root=/dev/vda rw" --disk path=OUT_DIR/debian.img --serial tty
# Environment: MIRROR (default http://deb.debian.org/debian), ROOTFS_SIZE (default 4G).
set -euo pipefail
out=${1:-build/rootfs}
mirror=${MIRROR:-http://deb.debian.org/debian}
size=${ROOTFS_SIZE:-4G}
die() { echo "build-rootfs: $*" >&2; exit 1; }
say() { echo "build-rootfs: $*" >&2; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap and chroot)"
stamp="$(sha256sum "$0" | cut -c1-16) $mirror $size"
if [ -s "$out/debian.img" ] && [ -s "$out/vmlinuz" ] && [ -s "$out/initrd.img" ] &&
	[ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
	say "cached in $out (delete $out/stamp to build again)"
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
command -v debootstrap >/dev/null && command -v mkfs.ext4 >/dev/null ||
	apt-get install -y --no-install-recommends debootstrap e2fsprogs >/dev/null 2>&1 ||
	{ apt-get update -qq >/dev/null 2>&1 && apt-get install -y --no-install-recommends debootstrap e2fsprogs >/dev/null; } ||
	die "apt-get install of debootstrap and e2fsprogs failed"
mkdir -p "$out"
root="$out/root.tmp"
rm -rf "$root" "$out/stamp"
trap 'for m in proc sys dev; do umount "$root/$m" 2>/dev/null || true; done; rm -rf "$root"' EXIT
pkgs=systemd,systemd-sysv,udev,dbus,iproute2,iputils-ping,procps,kmod,login,passwd,e2fsprogs
pkgs=$pkgs,fio,initramfs-tools,linux-image-cloud-amd64
start=$(date +%s)
say "debootstrap bookworm from $mirror into $root (a few minutes; its log: $out/debootstrap.log)"
debootstrap --variant=minbase --include="$pkgs" bookworm "$root" "$mirror" >"$out/debootstrap.log" 2>&1 ||
	die "debootstrap failed (the end of $out/debootstrap.log: $(tail -n 3 "$out/debootstrap.log" | tr '\n' ' '))"
say "debootstrap done in $(( $(date +%s) - start )) s; configuring"

echo msivm-debian >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 msivm-debian\n' >"$root/etc/hosts"
printf '/dev/vda / ext4 defaults,errors=remount-ro 0 1\n' >"$root/etc/fstab"
mkdir -p "$root/etc/systemd/network" "$root/var/log/journal"
cat >"$root/etc/systemd/network/10-msivm.network" <<'EOF'
[Match]
Type=ether

[Network]
Address=10.0.2.15/24
Gateway=10.0.2.2
EOF
# initramfs-tools: the virtio modules a root on virtio-blk needs, whatever the build host has
printf 'virtio_pci\nvirtio_blk\nvirtio_net\nvirtio_console\next4\n' >>"$root/etc/initramfs-tools/modules"
for m in proc sys dev; do mount --bind "/$m" "$root/$m"; done
chroot "$root" sh -c 'echo root:msivm | chpasswd' || die "setting root's password failed"
chroot "$root" systemctl enable systemd-networkd serial-getty@ttyS0.service \
	serial-getty@hvc0.service >/dev/null 2>&1 || die "systemctl enable failed"
ver=$(basename "$(ls -d "$root"/lib/modules/* | head -n1)")
[ -n "$ver" ] || die "no kernel in the root filesystem"
chroot "$root" update-initramfs -u -k "$ver" >/dev/null 2>&1 || die "update-initramfs failed"
for m in proc sys dev; do umount "$root/$m"; done
cp "$root/boot/vmlinuz-$ver" "$out/vmlinuz"
cp "$root/boot/initrd.img-$ver" "$out/initrd.img"
chroot "$root" apt-get clean >/dev/null 2>&1 || true

say "ext4 image of $size ($(du -sh "$root" | cut -f1) of files)"
rm -f "$out/debian.img"
truncate -s "$size" "$out/debian.img"
mkfs.ext4 -q -F -L msivm-root -d "$root" "$out/debian.img" || die "mkfs.ext4 -d failed"
echo "$stamp" >"$out/stamp"
say "done in $(( $(date +%s) - start )) s: $out/debian.img ($(du -h "$out/debian.img" | cut -f1) on disk), kernel $ver"
