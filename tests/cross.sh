#!/bin/sh
# Raspberry Pi builds on an x86 Debian 12 host: Debian multiarch cross
# compilers, the target's -dev packages, and qemu-user to run what was built.
#   sh tests/cross.sh deps ARCH          install what a cross build of ARCH needs
#   sh tests/cross.sh pkg-config ARCH .. pkg-config answering for ARCH (the Makefile's PKG_CONFIG)
#   sh tests/cross.sh run ARCH PROG ..   run a target binary under qemu-user
#   sh tests/cross.sh triplet ARCH       the GNU triplet (aarch64-linux-gnu, ...)
# ARCH is arm64 (Raspberry Pi OS 64-bit) or armhf (32-bit).
cd "$(dirname "$0")/.." || exit 2
cmd=$1 arch=$2
[ $# -ge 2 ] && shift 2
case $arch in
arm64) triplet=aarch64-linux-gnu qemu=qemu-aarch64 ;;
armhf) triplet=arm-linux-gnueabihf qemu=qemu-arm ;;
*) echo "cross: ARCH must be arm64 or armhf, not '$arch'" >&2; exit 2 ;;
esac
# libevent-dev is Multi-Arch: no in Debian 12 (its event-config.h differs per
# architecture), so the target's copy cannot be installed beside the host's:
# it is unpacked into this private sysroot instead (headers, .pc, .so links).
sysroot=build/cross-$arch/sysroot

# The target's -dev packages; runtime libraries come with them (Multi-Arch: same).
# Keep in step with DEPS_BUILD in the Makefile.
DEV="libc6 libmicrohttpd-dev libturbojpeg0-dev libjpeg62-turbo-dev libv4l-dev libyuv-dev
     libgnutls28-dev libcrypt-dev libopenh264-dev libevent-2.1-7 libevent-core-2.1-7 libevent-pthreads-2.1-7"

deps() {
	SUDO=
	[ "$(id -u)" != 0 ] && SUDO=sudo
	if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
		echo "cross: dpkg --add-architecture $arch"
		$SUDO dpkg --add-architecture "$arch" || exit 1
		# no apt-get update here: deps.sh updates (tolerating an index it
		# does not need that a mirror has half-synced) before it installs
	fi
	pkgs="crossbuild-essential-$arch qemu-user"
	for p in $DEV; do pkgs="$pkgs $p:$arch"; done
	# shellcheck disable=SC2086
	sh tests/deps.sh $pkgs || exit 1
	[ -f "$sysroot/.done" ] && return 0
	echo "cross: unpacking libevent-dev:$arch into $sysroot"
	rm -rf "$sysroot" && mkdir -p "$sysroot" || exit 1
	tmp=$(mktemp -d) || exit 1
	# apt-get download needs no root; the user _apt must be able to write tmp
	chmod 777 "$tmp"
	sh tests/deps.sh --download "$tmp" "libevent-dev:$arch" || {
		echo "cross: apt-get download libevent-dev:$arch failed" >&2; rm -rf "$tmp"; exit 1; }
	dpkg-deb -x "$tmp"/libevent-dev_*.deb "$sysroot" || exit 1
	rm -rf "$tmp"
	root=$(cd "$sysroot" && pwd)
	# .pc files point into the sysroot; .so links at the real multiarch libraries
	sed -i "s|^prefix=/usr|prefix=$root/usr|" "$sysroot/usr/lib/$triplet/pkgconfig/"*.pc
	for l in "$sysroot/usr/lib/$triplet/"*.so; do
		t=$(readlink "$l") && ln -sf "/usr/lib/$triplet/$(basename "$t")" "$l"
	done
	touch "$sysroot/.done"
}

case $cmd in
deps) deps ;;
pkg-config)
	PKG_CONFIG_LIBDIR=$sysroot/usr/lib/$triplet/pkgconfig:/usr/lib/$triplet/pkgconfig:/usr/share/pkgconfig
	export PKG_CONFIG_LIBDIR
	exec pkg-config "$@" ;;
run)
	# No -L /usr/$triplet: the target's own libc6:$arch (multiarch) provides
	# /lib/ld-linux-*.so and every library. The cross toolchain's libc is a
	# different build; mixing its loader with the multiarch libc hangs or
	# crashes any program that starts a thread (seen with qemu 7.2).
	exec "$qemu" "$@" ;;
triplet) echo "$triplet" ;;
*) echo "cross: unknown command '$cmd'" >&2; exit 2 ;;
esac
