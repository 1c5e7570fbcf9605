#!/bin/sh
# `make deb`: Debian packages of vcapd for each ARCH given (amd64, arm64,
# armhf) from the builds already made: build/vcapd for this machine's own
# arch, build/cross-ARCH/vcapd (make cross ARCH=...) for the others. Written to
# build/deb/vcapd_VERSION_ARCH.deb with dpkg-deb; no debian/ tree in the
# repository. Each holds:
#   /usr/bin/vcapd                       the daemon (stripped)
#   /usr/share/vcapd/web/                the web page
#   /etc/vcapd/vcapd.conf                the commented example, a conffile
#   /lib/systemd/system/vcapd{,@}.service
#   /usr/share/vcapd/libcamera.conf      the CSI-camera drop-in (not active)
# Depends come from the binary's NEEDED libraries through dpkg-shlibdeps
# (the shlibs/symbols files of the libraries: installed ones for this
# machine's arch, the cross build's sysroot database for the others). Installing enables and starts nothing (postinst says how);
# removing stops the units and any vcapd left running from /usr/bin/vcapd.
# The test is tests/deb_check.sh (run-all suite "deb").
cd "$(dirname "$0")/.." || exit 2
out=build/deb
mkdir -p "$out" || exit 1
version=$(sed -n 's/^#define VCAPD_VERSION "\(.*\)"/\1/p' server/cli.c)
[ -n "$version" ] || { echo "deb: no VCAPD_VERSION in server/cli.c" >&2; exit 1; }
[ $# = 0 ] && set -- amd64 arm64 armhf

one() { # $1 = arch
	arch=$1
	case $arch in
	amd64) triplet=x86_64-linux-gnu ;;
	arm64) triplet=aarch64-linux-gnu ;;
	armhf) triplet=arm-linux-gnueabihf ;;
	*) echo "deb: ARCH must be amd64, arm64 or armhf, not '$arch'" >&2; return 1 ;;
	esac
	# this machine's own arch (amd64 on a PC, arm64 on a Pi): the plain build
	if [ "$arch" = "$(dpkg --print-architecture)" ]; then
		bin=build/vcapd strip=strip
	else
		bin=build/cross-$arch/vcapd strip=$triplet-strip
	fi
	if [ ! -x "$bin" ]; then
		if [ "$bin" = build/vcapd ]; then echo "deb: no $bin: run make first" >&2
		else echo "deb: no $bin: run make cross ARCH=$arch first" >&2; fi
		return 1
	fi
	root=$out/root-$arch
	rm -rf "$root" && mkdir -p "$root/DEBIAN" || return 1
	install -Dm755 "$bin" "$root/usr/bin/vcapd" &&
		$strip --strip-unneeded "$root/usr/bin/vcapd" &&
		install -d "$root/usr/share/vcapd/web" &&
		cp -r web/. "$root/usr/share/vcapd/web/" &&
		install -Dm644 conf/vcapd.conf "$root/etc/vcapd/vcapd.conf" &&
		install -d "$root/lib/systemd/system" "$root/usr/share/doc/vcapd" || return 1
	for u in vcapd.service vcapd@.service; do
		sed 's|/usr/local/bin/vcapd|/usr/bin/vcapd|' "systemd/$u" >"$root/lib/systemd/system/$u" || return 1
	done
	sed 's|/usr/local/|/usr/|g' systemd/libcamera.conf >"$root/usr/share/vcapd/libcamera.conf" &&
		install -m644 README.md "$root/usr/share/doc/vcapd/README.md" || return 1
	chmod 644 "$root/lib/systemd/system/"* "$root/usr/share/vcapd/libcamera.conf"
	# dpkg-shlibdeps wants a debian/control above where it runs
	sd=$out/shlibs-$arch
	rm -rf "$sd" && mkdir -p "$sd/debian" || return 1
	printf 'Source: vcapd\n\nPackage: vcapd\nArchitecture: any\n' >"$sd/debian/control"
	# a cross build's libraries are not in dpkg's database but unpacked in
	# its sysroot, with a database of their own (tests/cross.sh admindir)
	admin="" libs=/usr/lib/$triplet
	if [ "$bin" != build/vcapd ]; then
		admin=--admindir=$(sh tests/cross.sh admindir "$arch")
		libs=$(pwd)/build/cross-$arch/sysroot/usr/lib/$triplet
		[ -f "${admin#--admindir=}/status" ] || {
			echo "deb: no dpkg database of the $arch sysroot: run make cross ARCH=$arch" >&2; return 1; }
	fi
	deps=$(cd "$sd" && dpkg-architecture -a "$arch" -f -c \
		dpkg-shlibdeps $admin -O -l"$libs" "$OLDPWD/$root/usr/bin/vcapd" 2>"$OLDPWD/$out/shlibdeps-$arch.log" |
		sed -n 's/^shlibs:Depends=//p')
	if [ -z "$deps" ]; then
		echo "deb: dpkg-shlibdeps found no dependencies for $arch:" >&2
		cat "$out/shlibdeps-$arch.log" >&2
		return 1
	fi
	size=$(du -sk "$root" | cut -f1)
	cat >"$root/DEBIAN/control" <<CTL
Package: vcapd
Version: $version
Architecture: $arch
Maintainer: vcapd developers <vcapd@localhost>
Installed-Size: $size
Depends: $deps
Recommends: systemd
Suggests: libcamera-v4l2
Section: video
Priority: optional
Description: V4L2 video capture server (MJPEG, snapshots, H.264 over HTTP)
 vcapd serves USB webcams, capture cards and (through libcamerify) Raspberry
 Pi CSI cameras over HTTP: MJPEG streams, JPEG snapshots, raw frames and
 H.264 (fragmented MP4 for browsers, Annex-B), with a web page, to
 browsers, curl, ffmpeg, OctoPrint, Mainsail and Home Assistant.
 .
 The vcapd service is installed but not enabled; it runs without a config,
 serving every camera found on port 8080 of every address.
CTL
	echo /etc/vcapd/vcapd.conf >"$root/DEBIAN/conffiles"
	# The scripts run chrooted, or with DPKG_ROOT set (dpkg --root with
	# --force-script-chrootless): systemctl only on a live system.
	cat >"$root/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
	if [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then
		systemctl daemon-reload || true
	fi
	echo "vcapd: installed, not started. Start it now and at every boot:"
	echo "  sudo systemctl enable --now vcapd"
	echo "then open http://$(hostname 2>/dev/null || echo HOST):8080/ (settings: /etc/vcapd/vcapd.conf)"
fi
SH
	cat >"$root/DEBIAN/prerm" <<'SH'
#!/bin/sh
# Stops what runs from this package: the units, then any vcapd started by
# hand from its binary (removing leaves no process behind).
if [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then
	systemctl disable --now vcapd.service >/dev/null 2>&1 || true
	systemctl stop 'vcapd@*.service' >/dev/null 2>&1 || true
fi
exe="$DPKG_ROOT/usr/bin/vcapd"
pids=
for p in /proc/[0-9]*; do
	[ "$(readlink "$p/exe" 2>/dev/null)" = "$exe" ] && pids="$pids ${p#/proc/}"
done
if [ -n "$pids" ]; then
	echo "vcapd: stopping$pids"
	kill $pids 2>/dev/null || true
	i=0
	while [ $i -lt 50 ]; do
		left=
		for q in $pids; do [ -d "/proc/$q" ] && left=1; done
		[ -z "$left" ] && break
		sleep 0.1; i=$((i + 1))
	done
	kill -9 $pids 2>/dev/null || true
fi
exit 0
SH
	cat >"$root/DEBIAN/postrm" <<'SH'
#!/bin/sh
set -e
if [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
if [ "$1" = purge ]; then
	rmdir "$DPKG_ROOT/etc/vcapd" 2>/dev/null || true
fi
SH
	chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
	deb=$out/vcapd_${version}_$arch.deb
	dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null || return 1
	echo "deb: $deb (Depends: $deps)"
}

rc=0
for a in "$@"; do one "$a" || rc=1; done
exit $rc
