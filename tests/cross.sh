#!/bin/sh
# Raspberry Pi builds on an x86 Debian 12 host: Debian's cross compilers, the
# target's libraries unpacked into a private sysroot, and qemu-user to run
# what was built.
#   sh tests/cross.sh deps ARCH          install the cross compiler, fill the sysroot
#   sh tests/cross.sh pkg-config ARCH .. pkg-config answering for ARCH (the Makefile's PKG_CONFIG)
#   sh tests/cross.sh cflags ARCH        compiler flags for the sysroot's headers
#   sh tests/cross.sh ldflags ARCH       linker flags for the sysroot's libraries
#   sh tests/cross.sh run ARCH PROG ..   run a target binary under qemu-user
#   sh tests/cross.sh triplet ARCH       the GNU triplet (aarch64-linux-gnu, ...)
#   sh tests/cross.sh admindir ARCH      a dpkg database of the sysroot (dpkg-shlibdeps --admindir)
# ARCH is arm64 (Raspberry Pi OS 64-bit) or armhf (32-bit).
#
# Why a sysroot and not multiarch packages installed on the host: a library
# that is Multi-Arch: same must have the same version for every architecture
# installed, so once the host has a security update of, say, libssl3, the
# target's copy can only come from the security suite's index for that
# architecture; while a mirror is mid-sync on that index (seen for weeks on
# bookworm-security armhf) nothing installs. Unpacked into a folder of its
# own, the target's libraries need no version in step with the host's, and
# the host's package state is left alone. The compiler (crossbuild-essential,
# Architecture: all) and qemu-user are ordinary host packages.
cd "$(dirname "$0")/.." || exit 2
cmd=$1 arch=$2
[ $# -ge 2 ] && shift 2
case $arch in
arm64) triplet=aarch64-linux-gnu qemu=qemu-aarch64 ;;
armhf) triplet=arm-linux-gnueabihf qemu=qemu-arm ;;
*) echo "cross: ARCH must be arm64 or armhf, not '$arch'" >&2; exit 2 ;;
esac
sysroot=$(pwd)/build/cross-$arch/sysroot
admindir=$(pwd)/build/cross-$arch/dpkg

# The target's -dev packages (keep in step with DEPS_BUILD in the Makefile)
# and libc6 for its loader and C library under qemu-user; each one's
# dependencies are unpacked with it.
DEV="libc6 libevent-dev libmicrohttpd-dev libturbojpeg0-dev libjpeg62-turbo-dev libv4l-dev libyuv-dev
     libgnutls28-dev libcrypt-dev libopenh264-dev"
# The C library's headers and start files come with the cross compiler
# (libc6-dev-ARCH-cross); a second copy in the sysroot would shadow them.
LEAVE_OUT="libc6-dev linux-libc-dev libc-dev-bin"

deps() {
	SUDO=
	[ "$(id -u)" != 0 ] && SUDO=sudo
	sh tests/deps.sh "crossbuild-essential-$arch" qemu-user || exit 1
	# what the sysroot holds, and how it was laid out (v2: with the dpkg database)
	want="v2 $(echo $DEV)"
	[ -f "$sysroot/.done" ] && [ "$(cat "$sysroot/.done")" = "$want" ] && return 0
	# apt needs the target's package lists to download its packages
	if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
		echo "cross: dpkg --add-architecture $arch"
		$SUDO dpkg --add-architecture "$arch" || exit 1
	fi
	if ! apt-cache show "libc6:$arch" >/dev/null 2>&1; then
		sh tests/deps.sh --update || exit 1
	fi
	pkgs=""
	for p in $DEV; do pkgs="$pkgs $p:$arch"; done
	# the closure: every package of the target's architecture these depend on
	# shellcheck disable=SC2086
	list=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances $pkgs 2>/dev/null | grep -x "[a-z0-9.+-]*:$arch" | sort -u)
	for p in $LEAVE_OUT; do list=$(echo "$list" | grep -vx "$p:$arch"); done
	if [ -z "$list" ]; then
		echo "cross: apt knows none of the $arch packages (apt-cache show libc6:$arch fails); apt-get update?" >&2
		exit 1
	fi
	echo "cross: unpacking $(echo "$list" | wc -l) $arch packages into $sysroot"
	tmp=$(mktemp -d) || exit 1
	# apt-get download needs no root; the user _apt must be able to write tmp
	chmod 777 "$tmp"
	# shellcheck disable=SC2086
	sh tests/deps.sh --download "$tmp" $list || { rm -rf "$tmp"; exit 1; }
	rm -rf "$sysroot" "$admindir" && mkdir -p "$sysroot" "$admindir/info" "$admindir/updates" || exit 1
	# a dpkg database of what was unpacked, its paths inside the sysroot
	# (merged /usr: /lib is usr/lib), for dpkg-shlibdeps --admindir (make deb)
	echo 1 >"$admindir/info/format"
	: >"$admindir/available"
	for d in "$tmp"/*.deb; do
		dpkg-deb -x "$d" "$sysroot" || { rm -rf "$tmp"; exit 1; }
		p=$(dpkg-deb -f "$d" Package) n=$p
		[ "$(dpkg-deb -f "$d" Multi-Arch)" = same ] && n=$p:$arch
		{ dpkg-deb -f "$d" | grep -v '^Status:'; echo 'Status: install ok installed'; echo; } >>"$admindir/status"
		dpkg-deb -c "$d" | awk '{ print $6 }' | sed "s|^\./lib/|./usr/lib/|; s|^\./|$sysroot/|; s|/$||" |
			grep '^/' >"$admindir/info/$n.list"
		rm -rf "$tmp/ctl" && dpkg-deb -e "$d" "$tmp/ctl" || exit 1
		for f in shlibs symbols; do
			[ -f "$tmp/ctl/$f" ] && cp "$tmp/ctl/$f" "$admindir/info/$n.$f"
		done
	done
	rm -rf "$tmp"
	# merged /usr, as on the target: /lib is usr/lib
	if [ -d "$sysroot/lib" ] && [ ! -L "$sysroot/lib" ]; then
		mkdir -p "$sysroot/usr/lib"
		cp -a "$sysroot/lib/." "$sysroot/usr/lib/" && rm -rf "$sysroot/lib" || exit 1
	fi
	ln -sfn usr/lib "$sysroot/lib"
	# links that point at an absolute path point into the sysroot instead
	find "$sysroot" -type l | while read -r l; do
		t=$(readlink "$l")
		case $t in /*) ln -sfn "$sysroot$t" "$l" ;; esac
	done
	echo "$want" >"$sysroot/.done"
}

libdir=$sysroot/usr/lib/$triplet
case $cmd in
deps) deps ;;
pkg-config)
	PKG_CONFIG_LIBDIR=$libdir/pkgconfig:$sysroot/usr/share/pkgconfig
	PKG_CONFIG_SYSROOT_DIR=$sysroot
	export PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
	exec pkg-config "$@" ;;
cflags) echo "-I$sysroot/usr/include/$triplet -I$sysroot/usr/include" ;;
# -L for the libraries named without pkg-config (-lyuv -lcrypt), -rpath-link
# for the libraries those libraries need
ldflags) echo "-L$libdir -Wl,-rpath-link,$libdir" ;;
run)
	# The loader and every library from the sysroot (qemu looks up each path
	# there first): the target's own libc6 build. The cross toolchain's libc
	# is a different build; mixing its loader with another libc hangs or
	# crashes any program that starts a thread (seen with qemu 7.2).
	exec "$qemu" -L "$sysroot" "$@" ;;
triplet) echo "$triplet" ;;
admindir) echo "$admindir" ;;
*) echo "cross: unknown command '$cmd'" >&2; exit 2 ;;
esac
