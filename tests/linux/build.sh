#!/usr/bin/env bash
# build.sh: the Linux guests of `make check-linux`, from Debian packages.
#
#   tests/linux/build.sh l2        L2: build/linux/l2/{vmlinuz,initramfs.cpio.gz} (the test guest)
#   tests/linux/build.sh l1        L1: build/linux/l1/{vmlinuz,initramfs.cpio} (the nested host;
#                                  needs l2 and build/msivm)
#   tests/linux/build.sh l1run     build/linux/l1run/{vmlinuz,initramfs.cpio}: the nested host of
#                                  scripts/nested/run.sh (runs host commands over virtiofs)
#   tests/linux/build.sh distro    build/linux/distro/check.img: the Debian image of
#                                  scripts/build-rootfs.sh (built into build/rootfs when missing)
#                                  with tests/linux/distro-check and its unit written into it
#
# Both use the Debian cloud kernel behind linux-image-cloud-amd64 (the one
# scripts/build-initramfs.sh boots). The .deb is downloaded once into build/linux/dl/ and reused.
# Needs root when a package is missing (apt-get install) or the kernel is not cached yet.
# Environment: OUT (default build/linux), MSIVM (default build/msivm).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
OUT=$(mkdir -p "${OUT:-build/linux}" && cd "${OUT:-build/linux}" && pwd)
MSIVM=${MSIVM:-build/msivm}
meta=linux-image-cloud-amd64
die() { echo "build.sh: $*" >&2; exit 1; }
t0=$(date +%s)
note() { echo "build.sh: [$(($(date +%s) - t0))s] $*" >&2; }

# Tools, installed from apt when missing (command -> package).
need() {
	local missing=() c p
	for c in "$@"; do
		p=${c#*:} c=${c%%:*}
		if [ "$c" = busybox-static ]; then
			# the static build (busybox-static) has nc, blkdiscard, ... and needs no libraries
			case "$(ldd /bin/busybox 2>&1 || true)" in
			*"not a dynamic"*) /bin/busybox --list | grep -qx nc || missing+=(busybox-static) ;;
			*) missing+=(busybox-static) ;;
			esac
		else
			command -v "$c" >/dev/null || missing+=("$p")
		fi
	done
	[ ${#missing[@]} = 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages ${missing[*]} (run as root to install them)"
	note "apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
		apt-get update -qq >/dev/null 2>&1
		apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
	} || die "apt-get install ${missing[*]} failed"
}

# The kernel .deb, cached in $OUT/dl; extracted (with modules.dep) into $OUT/kernel.
kernel() {
	local dl=$OUT/dl pkg deb
	mkdir -p "$dl"
	chmod 755 "$dl" # apt's _apt user writes the download when it can
	pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
	if [ -z "$pkg" ] && ! ls "$dl"/linux-image-*.deb >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
		note "$meta unknown to apt: apt-get update"
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
	fi
	if [ -n "$pkg" ]; then
		deb=$(ls "$dl/${pkg}_"*.deb 2>/dev/null | head -n1 || true)
		if [ -z "$deb" ]; then
			note "downloading $pkg into $dl"
			(cd "$dl" && apt-get download -q "$pkg" >/dev/null 2>"$dl/apt.err") ||
				{ cat "$dl/apt.err" >&2; die "apt-get download $pkg failed"; }
			deb=$(ls "$dl/${pkg}_"*.deb | head -n1)
		fi
	else
		deb=$(ls -t "$dl"/linux-image-*.deb 2>/dev/null | head -n1 || true)
		[ -n "$deb" ] || die "cannot resolve the kernel package behind $meta and none is cached in $dl"
		note "apt cannot resolve $meta; using the cached $(basename "$deb")"
	fi
	KROOT=$OUT/kernel
	if [ ! -s "$KROOT/deb" ] || [ "$(cat "$KROOT/deb")" != "$(basename "$deb")" ]; then
		rm -rf "$KROOT"
		mkdir -p "$KROOT"
		dpkg-deb -x "$deb" "$KROOT/root"
		KVER=$(basename "$(ls -d "$KROOT"/root/lib/modules/*)")
		depmod -b "$KROOT/root" "$KVER" || die "depmod failed" # the package ships no modules.dep
		basename "$deb" >"$KROOT/deb"
	fi
	KVER=$(basename "$(ls -d "$KROOT"/root/lib/modules/*)")
	KVMLINUZ=$KROOT/root/boot/vmlinuz-$KVER
	MODDIR=$KROOT/root/lib/modules/$KVER
}

# add_module ROOT NAME: the module and its dependencies (modules.dep), decompressed, appended to
# ROOT/lib/modules/VER/load-order in load order.
add_module() {
	local root=$1 path rel dep name dst=$1/lib/modules/$KVER
	path=$(find "$MODDIR" -name "$2.ko*" | head -n1)
	if [ -z "$path" ]; then
		grep -qE "/$2.ko" "$MODDIR/modules.builtin" 2>/dev/null || die "module $2 not found"
		return 0
	fi
	rel=${path#"$MODDIR"/}
	for dep in $(sed -n "s|^$rel: *||p" "$MODDIR/modules.dep"); do
		add_module "$root" "$(basename "${dep%%.ko*}")"
	done
	name=$(basename "${path%%.ko*}")
	mkdir -p "$dst"
	grep -qx "$name" "$dst/load-order" 2>/dev/null && return 0
	case "$path" in
	*.xz) xz -dc "$path" >"$dst/$name.ko" ;;
	*.zst) zstd -dcq "$path" >"$dst/$name.ko" ;;
	*) cp "$path" "$dst/$name.ko" ;;
	esac
	echo "$name" >>"$dst/load-order"
}

# copy_with_libs ROOT BINARY [DEST]: a dynamically linked binary and its shared libraries.
copy_with_libs() {
	local root=$1 bin=$2 dst=${3:-$2} lib
	install -D -m 755 "$bin" "$root$dst"
	ldd "$bin" | grep -oE '/[^ ]+\.so[^ ]*' | while read -r lib; do
		[ -e "$root$lib" ] || install -D "$(readlink -f "$lib")" "$root$lib"
	done
}

# copy_stubbed ROOT BINARY STUB-SONAMES...: like copy_with_libs, but each library named in
# STUB-SONAMES is replaced by a stub with the same soname, symbol versions and (empty) functions
# the binary links. fio links every storage engine's client library (ceph, gluster, RDMA, NBD,
# pmem: 70 MiB with their dependencies); the test guest only uses libaio and psync, and the stubs
# keep its initramfs small, which matters when it boots under nested TCG.
copy_stubbed() {
	local root=$1 bin=$2 so path lib tmp
	shift 2
	install -D -m 755 "$bin" "$root$bin"
	tmp=$(mktemp -d)
	for so in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(ldd "$bin" | awk -v s="$so" '$1 == s { print $3 }')
		[ -n "$path" ] || die "$bin: $so not found"
		case " $* " in
		*" $so "*)
			# Undefined functions of the binary that this library defines, grouped by version.
			objdump -T "$path" | awk '$2 == "g" && $4 == ".text" { v = $(NF - 1); gsub(/[()]/, "", v); print $NF, v }' |
				sort -u >"$tmp/defs"
			objdump -T "$bin" | awk '$3 == "*UND*" { v = $(NF - 1); gsub(/[()]/, "", v); print $NF, v }' | sort -u >"$tmp/und"
			awk 'NR == FNR { u[$1 " " $2] = 1; next } (($1 " " $2) in u)' "$tmp/und" "$tmp/defs" >"$tmp/syms"
			awk '{ print "void " $1 "(void) {}" }' "$tmp/syms" >"$tmp/stub.c"
			awk '$2 != "Base" { s[$2] = s[$2] " " $1 ";" } END { for (v in s) print v " { global:" s[v] " };" }' \
				"$tmp/syms" | sort >"$tmp/vers"
			if [ -s "$tmp/vers" ]; then
				gcc -shared -fPIC -nostdlib -o "$tmp/$so" -Wl,-soname,"$so" -Wl,--version-script="$tmp/vers" "$tmp/stub.c"
			else
				gcc -shared -fPIC -nostdlib -o "$tmp/$so" -Wl,-soname,"$so" "$tmp/stub.c"
			fi || die "stub $so failed"
			install -D "$tmp/$so" "$root$(dirname "$path")/$so"
			;;
		*)
			[ -e "$root$path" ] || install -D "$(readlink -f "$path")" "$root$path"
			ldd "$path" | grep -oE '/[^ ]+\.so[^ ]*' | while read -r lib; do
				[ -e "$root$lib" ] || install -D "$(readlink -f "$lib")" "$root$lib"
			done
			;;
		esac
	done
	# the dynamic loader
	lib=$(readelf -l "$bin" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
	[ -e "$root$lib" ] || install -D "$(readlink -f "$lib")" "$root$lib"
	rm -rf "$tmp"
}

vsk() { # ROOT: the vsock checks' stream ends (tests/linux/vsk.c), static
	gcc -static -O2 -Wall -Wextra -Werror -o "$1/bin/vsk" "$here/vsk.c" || die "cannot build vsk"
}

busybox_root() { # ROOT
	mkdir -p "$1"/{bin,sbin,dev,proc,sys,tmp,etc,usr/bin,usr/sbin}
	cp /bin/busybox "$1/bin/busybox"
	local app
	for app in $(/bin/busybox --list); do
		[ -e "$1/bin/$app" ] || ln -s busybox "$1/bin/$app"
	done
}

build_l2() {
	need busybox-static fio:fio iperf3:iperf3 ethtool:ethtool gcc:gcc objdump:binutils cpio:cpio xz:xz-utils zstd:zstd depmod:kmod dpkg-deb:dpkg
	kernel
	local out=$OUT/l2 root=$OUT/l2/root m
	rm -rf "$root"
	mkdir -p "$root"
	busybox_root "$root"
	copy_stubbed "$root" "$(command -v fio)" libgfapi.so.0 libnbd.so.0 libibverbs.so.1 librdmacm.so.1 \
		librados.so.2 librbd.so.1 libpmemblk.so.1 libpmem.so.1
	copy_with_libs "$root" "$(command -v iperf3)"
	copy_with_libs "$root" "$(command -v ethtool)" /usr/sbin/ethtool
	# button + evdev: the ACPI power button as an input device (power=button)
	# vmw_vsock_virtio_transport (with vsock): AF_VSOCK over msivm's --vsock
	# ext4: the kata configuration mounts the container disk attached through PATCH /drives
	# nvme, vmxnet3: the controller and the NIC the vfio configuration passes through
	# (tests/linux/vfio-init)
	for m in virtio_pci virtio_blk virtio_net virtio_console virtio-rng button evdev pvpanic-mmio \
		vmw_vsock_virtio_transport ext4 nvme vmxnet3; do add_module "$root" "$m"; done
	vsk "$root"
	install -m 755 "$here/guest-init" "$root/init"
	install -m 644 "$here/kata-guest" "$root/kata-guest"
	install -m 755 "$here/vfio-init" "$root/vfio-init" # the vfio configuration's guest
	install -m 755 "$here/../../guest/linux/lab-init" "$root/lab-init" # msivm lab --guest linux
	cp "$KVMLINUZ" "$out/vmlinuz.new"
	(cd "$root" && find . | sort | cpio -o -H newc --quiet | gzip -6) >"$out/initramfs.cpio.gz.new"
	mv -f "$out/vmlinuz.new" "$out/vmlinuz"
	mv -f "$out/initramfs.cpio.gz.new" "$out/initramfs.cpio.gz"
	echo "$KVER" >"$out/version"
	note "L2: $out/vmlinuz ($KVER), $out/initramfs.cpio.gz ($(du -h "$out/initramfs.cpio.gz" | cut -f1)), modules: $(tr '\n' ' ' <"$root/lib/modules/$KVER/load-order")"
	rm -rf "$root"
}

# pack_host ROOT OUT WHAT: a nested host's kernel and uncompressed initramfs (ROOT) into OUT,
# replaced together; ROOT is removed.
pack_host() {
	local root=$1 out=$2
	cp "$KVMLINUZ" "$out/vmlinuz.new"
	(cd "$root" && find . | sort | cpio -o -H newc --quiet) >"$out/initramfs.cpio.new"
	mv -f "$out/vmlinuz.new" "$out/vmlinuz"
	mv -f "$out/initramfs.cpio.new" "$out/initramfs.cpio"
	note "$3: $out/vmlinuz ($KVER), $out/initramfs.cpio ($(du -h "$out/initramfs.cpio" | cut -f1)), modules: $(tr '\n' ' ' <"$root/lib/modules/$KVER/load-order")"
	rm -rf "$root"
}

build_l1() {
	need busybox-static qemu-system-x86_64:qemu-system-x86 iperf3:iperf3 ip:iproute2 cpio:cpio \
		xz:xz-utils zstd:zstd depmod:kmod dpkg-deb:dpkg
	[ -x "$MSIVM" ] || die "$MSIVM not built (make)"
	[ -s "$OUT/l2/initramfs.cpio.gz" ] || die "no L2 guest: run $0 l2 first"
	kernel
	local out=$OUT/l1 root=$OUT/l1/root m f src
	rm -rf "$root"
	mkdir -p "$root/lc"
	busybox_root "$root"
	# vhost_net (with vhost, vhost_iotlb, tap): /dev/vhost-net for the vhost configuration;
	# vhost_vsock (with vsock): /dev/vhost-vsock for its --vsock backend=vhost and QEMU's
	# vfio_iommu_type1, vfio-pci: the vfio configuration passes L1's emulated NVMe through;
	# virtio_net: the peer of the vmxnet3 NIC it passes through (run-vfio.sh's msi variant)
	for m in irqbypass kvm kvm-amd tun vhost_net vhost_vsock loop virtio_pci virtio_blk \
		virtio_net vfio_iommu_type1 vfio-pci; do
		add_module "$root" "$m"
	done
	copy_with_libs "$root" "$MSIVM" /lc/msivm
	# the lab is its own program beside msivm (`msivm lab` starts it): check-linux.sh --lab
	[ -x "${MSIVM%/*}/msivm-lab" ] || die "${MSIVM%/*}/msivm-lab not built (make)"
	copy_with_libs "$root" "${MSIVM%/*}/msivm-lab" /lc/msivm-lab
	# ... and libmicrohttpd, which msivm opens only for an API socket (no ldd line names it)
	mhd=$(ldconfig -p | awk '$1 == "libmicrohttpd.so.12" { print $NF; exit }')
	[ -n "$mhd" ] || die "libmicrohttpd.so.12 not found (apt-get install libmicrohttpd12)"
	copy_with_libs "$root" "$mhd"
	vsk "$root"
	copy_with_libs "$root" "$(command -v iperf3)"
	copy_with_libs "$root" "$(command -v ip)" /usr/sbin/ip
	copy_with_libs "$root" "$(command -v qemu-system-x86_64)"
	copy_with_libs "$root" "$(command -v e2fsck)" /sbin/e2fsck # the distro configurations' fsck
	# QEMU's firmware, dereferenced (Debian links it into /usr/share/qemu from other packages).
	mkdir -p "$root/usr/share/qemu"
	for f in bios-256k.bin kvmvapic.bin linuxboot_dma.bin linuxboot.bin; do
		src=/usr/share/qemu/$f
		[ -e "$src" ] || src=/usr/share/seabios/$f
		[ -e "$src" ] && cp -L "$src" "$root/usr/share/qemu/$f"
	done
	cp "$OUT/l2/vmlinuz" "$root/lc/l2-vmlinuz"
	cp "$OUT/l2/initramfs.cpio.gz" "$root/lc/l2-initramfs.cpio.gz"
	install -m 755 "$here/run-checks.sh" "$root/lc/run-checks.sh"
	install -m 755 "$here/run-distro.sh" "$root/lc/run-distro.sh"
	install -m 755 "$here/run-kata.sh" "$root/lc/run-kata.sh"
	# the kata configuration's container disk: an ext4 image holding kata.txt (mke2fs -d: no mount)
	mkdir -p "$out/kata-ctr"
	echo kata-container-disk-ok >"$out/kata-ctr/kata.txt" # run-kata.sh's katatxt
	mke2fs -q -F -t ext4 -d "$out/kata-ctr" "$root/lc/kata-ctr.ext4" 8M || die "mke2fs failed"
	install -m 755 "$here/run-vfio.sh" "$root/lc/run-vfio.sh"
	install -m 644 "$here/checks.list" "$root/lc/checks.list"
	install -m 755 "$here/l1-init" "$root/init"
	echo "$KVER" >"$root/lc/kver"
	pack_host "$root" "$out" L1
}

# The nested host that runs host commands (scripts/nested/run.sh): only a kernel, its modules and
# an init; everything else (msivm, the tests, bash, QEMU) comes from the host over virtiofs.
build_l1run() {
	need busybox-static cpio:cpio xz:xz-utils zstd:zstd depmod:kmod dpkg-deb:dpkg
	kernel
	local out=$OUT/l1run root=$OUT/l1run/root m
	rm -rf "$root"
	mkdir -p "$root/nr"
	busybox_root "$root"
	# kvm-amd: /dev/kvm; virtiofs: the host's files; tun, veth, loop: what the tests use. No
	# vhost_net: the probe suites run as on a PVM host, which has none (test_net.sh checks that
	# backend=vhost says so; make check-linux runs vhost-net's data path in its own nested host).
	for m in irqbypass kvm kvm-amd virtio_pci virtiofs tun veth loop; do add_module "$root" "$m"; done
	install -m 755 "$top/scripts/nested/init" "$root/init"
	echo "$KVER" >"$root/nr/kver"
	pack_host "$root" "$out" "nested host"
}

# The distro configurations' image: a sparse copy of build-rootfs.sh's with distro-check as
# /usr/local/sbin/msivm-check and msivm-check.service enabled in multi-user.target (debugfs writes
# them into the ext4 image: nothing is mounted). The unit runs only with lc.distro on the kernel
# command line; Type=simple, so that the boot it waits for (is-system-running --wait) can end.
build_distro() {
	need debugfs:e2fsprogs
	"$top/scripts/build-rootfs.sh" "$top/build/rootfs" || die "scripts/build-rootfs.sh failed"
	local out=$OUT/distro u
	mkdir -p "$out"
	u=$out/msivm-check.service
	cat >"$u" <<'UNIT'
[Unit]
Description=msivm check-linux: the distro checks (tests/linux/distro-check)
ConditionKernelCommandLine=lc.distro
After=multi-user.target

[Service]
Type=simple
ExecStart=/usr/local/sbin/msivm-check
StandardOutput=journal

[Install]
WantedBy=multi-user.target
UNIT
	chmod 644 "$u"
	cp --sparse=always "$top/build/rootfs/debian.img" "$out/check.img.new"
	install -m 755 "$here/distro-check" "$out/msivm-check"
	debugfs -w -f - "$out/check.img.new" >"$out/debugfs.log" 2>&1 <<CMDS || die "debugfs failed: $(tail -n 3 "$out/debugfs.log")"
cd /usr/local/sbin
write $out/msivm-check msivm-check
cd /etc/systemd/system
write $u msivm-check.service
cd /etc/systemd/system/multi-user.target.wants
symlink msivm-check.service /etc/systemd/system/msivm-check.service
CMDS
	grep -qi "error\|not found\|exists" "$out/debugfs.log" && die "debugfs: $(grep -i "error\|not found\|exists" "$out/debugfs.log" | head -n 2)"
	rm -f "$out/msivm-check"
	mv -f "$out/check.img.new" "$out/check.img"
	note "distro: $out/check.img ($(du -h "$out/check.img" | cut -f1) on disk), from build/rootfs/debian.img"
}

mkdir -p "$OUT/l1" "$OUT/l2" "$OUT/l1run"
[ $# -ge 1 ] || set -- l2 l1
for what in "$@"; do
	case "$what" in
	l2) build_l2 ;;
	l1) build_l1 ;;
	l1run) build_l1run ;;
	distro) build_distro ;;
	*) die "unknown target $what (l1, l2, l1run or distro)" ;;
	esac
done
