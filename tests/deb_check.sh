#!/bin/sh
# make deb (tests/deb.sh): builds the amd64, arm64 and armhf packages from
# build/vcapd and the cross builds, then checks
#   contents:  the daemon for the right machine, web page, units, the
#              libcamera drop-in, /etc/vcapd/vcapd.conf as a conffile,
#              maintainer scripts that enable nothing;
#   depends:   amd64: `apt-get install --simulate ./x.deb` resolves on this
#              Debian 12; arm64/armhf: every Depends name exists for the
#              arch (apt-cache show NAME:ARCH; make cross added the arch);
#   install:   dpkg --root into a throwaway root (scripts run chrootless),
#              the daemon started as the installed unit's ExecStart says
#              (installed conffile, no listen line: --default-listen; the
#              address swapped for 127.0.0.1:0) serves /snapshot; and
#              with the conffile gone it still serves (no restart loop);
#   purge:     stops the daemon left running, leaves no file and no process.
# systemd itself starting the unit: tests/deb_systemd.sh (a booted container).
# Skipped under ASan (the packages hold the plain build) and when a cross
# build is missing. tests/run-all.sh runs it as the suite "deb", after the
# cross builds.
cd "$(dirname "$0")/.." || exit 2
T=deb
. tests/integ/lib/common.sh
BUILD=${VCAP_BUILD:-build}

case $BUILD in *asan*) skip all "packages are made from the plain build, not $BUILD"; exit 0 ;; esac
for a in arm64 armhf; do
	if [ ! -x "build/cross-$a/vcapd" ]; then
		skip all "no build/cross-$a/vcapd (make cross ARCH=$a; make test builds it)"; exit 0
	fi
done
for c in dpkg-deb dpkg-shlibdeps apt-get; do
	command -v $c >/dev/null || { skip all "$c missing"; exit 0; }
done

if ! sh tests/deb.sh amd64 arm64 armhf >"$TMP/build.log" 2>&1; then
	fail build "$(tr '\n' ' ' <"$TMP/build.log" | head -c 600)"; exit 1
fi
ok build "$(grep -c '^deb: ' "$TMP/build.log") packages"
V=$(sed -n 's/^#define VCAPD_VERSION "\(.*\)"/\1/p' server/cli.c)

# e_machine of the packaged daemon: amd64 62, arm64 183, armhf 40
machine() { dpkg-deb --fsys-tarfile "$1" | tar -xO ./usr/bin/vcapd | od -An -j18 -N2 -tu2 | tr -d ' '; }

for a in amd64 arm64 armhf; do
	d=build/deb/vcapd_${V}_$a.deb
	want=$(case $a in amd64) echo 62 ;; arm64) echo 183 ;; armhf) echo 40 ;; esac)
	files=$(dpkg-deb -c "$d" | awk '{print $6}' | tr '\n' ' ')
	miss=
	for f in ./usr/bin/vcapd ./usr/share/vcapd/web/index.html ./usr/share/vcapd/web/app.js \
		 ./etc/vcapd/vcapd.conf ./lib/systemd/system/vcapd.service ./lib/systemd/system/vcapd@.service \
		 ./usr/share/vcapd/libcamera.conf; do
		case " $files " in *" $f "*) ;; *) miss="$miss $f" ;; esac
	done
	dpkg-deb -e "$d" "$TMP/ctl-$a"
	m=$(machine "$d")
	[ -z "$miss" ] && [ "$m" = "$want" ] && [ "$(dpkg-deb -f "$d" Architecture)" = "$a" ] &&
		[ "$(cat "$TMP/ctl-$a/conffiles")" = /etc/vcapd/vcapd.conf ] &&
		! grep -Eq '^[[:space:]]*(systemctl[[:space:]]+(enable|start)|deb-systemd-(invoke|helper))' "$TMP/ctl-$a/postinst" &&
		dpkg-deb --fsys-tarfile "$d" | tar -xO ./lib/systemd/system/vcapd.service |
			grep -q '^ExecStart=/usr/bin/vcapd --config /etc/vcapd/vcapd.conf --config-optional' &&
		dpkg-deb --fsys-tarfile "$d" | tar -xO ./usr/share/vcapd/libcamera.conf |
			grep -q '^ExecStart=/usr/bin/libcamerify /usr/bin/vcapd '
	check "contents_$a" $? "missing:${miss:- none}, e_machine $m (want $want), conffiles $(cat "$TMP/ctl-$a/conffiles" 2>/dev/null)"

	# every Depends name exists for the arch; versions are dpkg-shlibdeps'
	deps=$(dpkg-deb -f "$d" Depends)
	bad=
	for n in $(echo "$deps" | tr ',|' '\n\n' | sed 's/(.*//; s/ //g' | grep .); do
		apt-cache show "$n:$a" >/dev/null 2>&1 || bad="$bad $n"
	done
	echo "$deps" | grep -q 'libmicrohttpd' && echo "$deps" | grep -q 'libopenh264' && [ -z "$bad" ]
	check "depends_exist_$a" $? "Depends: $deps; not found for $a:${bad:- none}"
done

# amd64: apt resolves the whole Depends on this host (Debian 12)
apt-get install --simulate -q "./build/deb/vcapd_${V}_amd64.deb" >"$TMP/sim.log" 2>&1
check depends_resolve_amd64 $? "$(tail -4 "$TMP/sim.log" | tr '\n' ' ')"

# install into a throwaway root
R=$TMP/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" && : >"$R/var/lib/dpkg/status"
D="dpkg --root=$R --force-script-chrootless --force-depends --log=$TMP/dpkg.log"
$D -i "build/deb/vcapd_${V}_amd64.deb" >"$TMP/inst.log" 2>&1
[ $? = 0 ] && [ -x "$R/usr/bin/vcapd" ] && [ -f "$R/etc/vcapd/vcapd.conf" ] && grep -q 'systemctl enable --now vcapd' "$TMP/inst.log"
check install $? "$(tr '\n' ' ' <"$TMP/inst.log" | head -c 500)"

# the unit's ExecStart, rooted in R, listening on a free loopback port
cmd=$(sed -n 's/^ExecStart=//p' "$R/lib/systemd/system/vcapd.service" |
	sed "s|/usr/bin/vcapd|$R/usr/bin/vcapd|; s|/etc/vcapd/|$R/etc/vcapd/|; s|--default-listen 0.0.0.0:8080|--default-listen 127.0.0.1:0|")
# serve LOG: runs $cmd, fetches /snapshot; sets SP (the daemon's pid), SC (HTTP code), SM (JPEG magic)
serve() {
	$cmd >"$1" 2>&1 &
	SP=$!
	PIDS="$PIDS $SP"
	port=
	for i in $(seq 50); do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:0 (port \([0-9]*\)).*/\1/p' "$1" | head -1)
		[ -n "$port" ] && break
		kill -0 $SP 2>/dev/null || break
		sleep 0.1
	done
	SC=$(curl -s -o "$TMP/snap.jpg" -w '%{http_code}' --max-time 10 "http://127.0.0.1:${port:-1}/snapshot")
	SM=$(head -c 2 "$TMP/snap.jpg" 2>/dev/null | od -An -tx1 | tr -d ' ')
}
serve "$TMP/run1.log"
[ "$SC" = 200 ] && [ "$SM" = ffd8 ] && grep -q "web root $R/usr/share/vcapd/web" "$TMP/run1.log"
check installed_serves_snapshot $? "$cmd: /snapshot $SC ($SM): $(tr '\n' ' ' <"$TMP/run1.log" | head -c 400)"
kill $SP; wait $SP 2>/dev/null

# the conffile removed by the user: the unit still starts on defaults
mv "$R/etc/vcapd/vcapd.conf" "$TMP/saved.conf"
serve "$TMP/run2.log"
[ "$SC" = 200 ] && [ "$SM" = ffd8 ] && grep -q 'running on defaults' "$TMP/run2.log"
check runs_without_config $? "/snapshot $SC ($SM): $(tr '\n' ' ' <"$TMP/run2.log" | head -c 400)"
mv "$TMP/saved.conf" "$R/etc/vcapd/vcapd.conf"

# purge while that daemon still runs: prerm stops it, nothing is left
$D --purge vcapd >"$TMP/purge.log" 2>&1; prc=$?
for i in $(seq 30); do kill -0 $SP 2>/dev/null || break; sleep 0.1; done
kill -0 $SP 2>/dev/null; alive=$?
[ "$alive" = 0 ] && kill -9 $SP 2>/dev/null # left running: the check fails, the test goes on
wait $SP 2>/dev/null
left=$(cd "$R" && find . -path ./var -prune -o ! -type d -print | tr '\n' ' ')
dirs=$(cd "$R" && find . -path ./var -prune -o -type d -print | grep -v '^\.$' | tr '\n' ' ')
[ "$prc" = 0 ] && [ "$alive" != 0 ] && [ -z "$left" ] && [ -z "$dirs" ] &&
	! grep -q '^Package: vcapd$' "$R/var/lib/dpkg/status"
check purge_leaves_nothing $? "rc=$prc daemon alive=$([ "$alive" = 0 ] && echo yes || echo no) files: ${left:-none} dirs: ${dirs:-none} $(tr '\n' ' ' <"$TMP/purge.log" | head -c 300)"
