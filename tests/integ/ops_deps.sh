#!/bin/sh
# tests/deps.sh while another apt holds its lock (unattended-upgrades, a Pi's
# first boot): it waits, says so, and goes on once the lock is free; a lock
# held past VCAP_APT_LOCK_WAIT ends it with the holder named. Real apt-get
# takes a real lock, but on a private lists directory with no sources (no
# network, the machine's own apt state untouched); "install" is a stub that
# logs what it was asked, and dpkg-query a stub that says the package is
# missing. The lock is held by python3's fcntl lock, the kind apt takes.
cd "$(dirname "$0")/../.." || exit 2
T=ops_deps
. tests/integ/lib/common.sh

for c in apt-get python3; do
	if ! command -v $c >/dev/null 2>&1; then
		skip lock_wait "$c not installed"; exit 0
	fi
done
if [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null; then
	skip lock_wait "deps.sh needs root or password-less sudo"; exit 0
fi
APT=$(command -v apt-get)
mkdir -p "$TMP/bin" "$TMP/lists/partial" "$TMP/parts"
touch "$TMP/lists/lock"
cat >"$TMP/bin/apt-get" <<EOF
#!/bin/sh
case "\$1" in
update) exec "$APT" -o Dir::State::Lists="$TMP/lists" -o Dir::Etc::sourcelist=/dev/null \\
	-o Dir::Etc::sourceparts="$TMP/parts" "\$@" ;;
install) echo "install \$*" >>"$TMP/installed"; exit 0 ;;
esac
exit 1
EOF
printf '#!/bin/sh\necho "dpkg-query: no packages found matching $3" >&2\nexit 1\n' >"$TMP/bin/dpkg-query"
chmod +x "$TMP/bin/apt-get" "$TMP/bin/dpkg-query"

# hold SECONDS: holds the lists lock in the background (returns once it is
# taken); sets HPID.
hold() {
	rm -f "$TMP/held"
	python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "a")
fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
open(sys.argv[3], "w").close()
time.sleep(float(sys.argv[2]))' "$TMP/lists/lock" "$1" "$TMP/held" &
	HPID=$!
	PIDS="$PIDS $HPID"
	for _i in $(seq 50); do
		[ -e "$TMP/held" ] && return 0
		sleep 0.1
	done
}

# Free after ~6 s: deps.sh waits, then installs.
hold 6
t0=$(date +%s)
out=$(PATH="$TMP/bin:$PATH" sh tests/deps.sh vcap-fake-pkg 2>&1); rc=$?
dt=$(($(date +%s) - t0))
[ $rc = 0 ] && [ "$dt" -ge 5 ] && echo "$out" | grep -q "another apt/dpkg is running (held by process $HPID (python3))" &&
	echo "$out" | grep -q "deps: done" && grep -q "install -y -qq --no-install-recommends vcap-fake-pkg" "$TMP/installed"
check lock_wait $? "rc=$rc after $dt s: $(echo "$out" | tr '\n' ' ')"
wait "$HPID" 2>/dev/null

# Held past the limit: gives up after it, naming the holder, exit 1.
hold 30
t0=$(date +%s)
out=$(PATH="$TMP/bin:$PATH" VCAP_APT_LOCK_WAIT=5 sh tests/deps.sh vcap-fake-pkg 2>&1); rc=$?
dt=$(($(date +%s) - t0))
kill "$HPID" 2>/dev/null
[ $rc = 1 ] && [ "$dt" -ge 4 ] && [ "$dt" -le 15 ] && echo "$out" | grep -q "still locked after 5 s" &&
	echo "$out" | grep -q "held by process $HPID"
check lock_wait_bounded $? "rc=$rc after $dt s: $(echo "$out" | tr '\n' ' ')"

# A mirror mid-sync: a real apt-get update against a package mirror served
# over HTTP on loopback, with two suites: "good" holds vcap-dummy, "broken"
# has a Release whose index size is off, as while a mirror syncs ("File has
# unexpected size ... Mirror sync in progress?": seen for bookworm-security
# armhf, which a cross build does not need). apt runs on private lists, cache
# and an empty dpkg status (the machine's own apt state untouched); install is
# apt's own simulation (-s) on those lists, so it fails exactly when apt has no
# candidate for a package.
arch=$(dpkg --print-architecture)
R=$TMP/mirror
mkdir -p "$TMP/pkg/DEBIAN" "$R/pool" "$TMP/m/lists/partial" "$TMP/m/cache/archives/partial" "$TMP/m/parts"
printf 'Package: vcap-dummy\nVersion: 1.0\nArchitecture: all\nMaintainer: vcapd tests <root@localhost>\nDescription: test package\n' \
	>"$TMP/pkg/DEBIAN/control"
dpkg-deb -b "$TMP/pkg" "$R/pool/vcap-dummy_1.0_all.deb" >/dev/null
: >"$TMP/m/status"
# suite NAME PACKAGE EXTRA: an index listing PACKAGE; Release states its size + EXTRA bytes
suite() {
	d=$R/dists/$1 f=main/binary-$arch/Packages
	mkdir -p "$d/main/binary-$arch"
	{ sed "s/vcap-dummy/$2/" "$TMP/pkg/DEBIAN/control"
	  echo "Filename: pool/vcap-dummy_1.0_all.deb"
	  echo "Size: $(stat -c %s "$R/pool/vcap-dummy_1.0_all.deb")"
	  echo "SHA256: $(sha256sum "$R/pool/vcap-dummy_1.0_all.deb" | cut -d' ' -f1)"; } >"$d/$f"
	printf 'Suite: %s\nCodename: %s\nArchitectures: %s all\nComponents: main\nDate: %s\nSHA256:\n %s %s %s\n' \
		"$1" "$1" "$arch" "$(date -Ru)" "$(sha256sum "$d/$f" | cut -d' ' -f1)" \
		$(($(stat -c %s "$d/$f") + $3)) "$f" >"$d/Release"
}
suite good vcap-dummy 0
suite broken vcap-synced 352
python3 -c 'import http.server, functools, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()' "$R" "$TMP/m/port" &
PIDS="$PIDS $!"
for _i in $(seq 50); do [ -s "$TMP/m/port" ] && break; sleep 0.1; done
MPORT=$(cat "$TMP/m/port")
for s in good broken; do echo "deb [trusted=yes] http://127.0.0.1:$MPORT $s main"; done >"$TMP/m/sources.list"
cat >"$TMP/bin/apt-get" <<EOF
#!/bin/sh
O="-o Dir::State::Lists=$TMP/m/lists -o Dir::Etc::sourcelist=$TMP/m/sources.list
   -o Dir::Etc::sourceparts=$TMP/m/parts -o Dir::Cache=$TMP/m/cache -o Dir::State::status=$TMP/m/status
   -o APT::Sandbox::User=root -o Acquire::http::Proxy=DIRECT -o Acquire::Retries=0"
echo "\$*" >>"$TMP/m/calls"
case "\$1" in
update) exec "$APT" \$O "\$@" ;;
install) shift
	# the first install fails as a broken fetch does, while $TMP/m/fail-once exists
	if [ -e "$TMP/m/fail-once" ]; then rm -f "$TMP/m/fail-once"
		echo "E: Failed to fetch http://127.0.0.1:$MPORT/pool/x.deb  Connection failed" >&2; exit 100; fi
	exec "$APT" \$O install -s "\$@" ;;
esac
exit 1
EOF
chmod +x "$TMP/bin/apt-get"
# deps_run PKG...: deps.sh with the mirror's apt-get; sets out, rc, dt
deps_run() {
	: >"$TMP/m/calls"
	t0=$(date +%s)
	out=$(PATH="$TMP/bin:$PATH" VCAP_APT_BACKOFF="1 1" sh tests/deps.sh "$@" 2>&1); rc=$?
	dt=$(($(date +%s) - t0))
}
# why: the end of deps.sh's output, on one line
why() { echo "rc=$rc after $dt s: $(echo "$out" | tr '\n' ' ' | tail -c 700)"; }

# The broken index is not needed: update is tried again, then deps.sh goes on
# and installs what it needs from the good one.
deps_run vcap-dummy
[ $rc = 0 ] && echo "$out" | grep -q "Mirror sync in progress" &&
	echo "$out" | grep -q "apt-get update failed; trying again in 1 s" &&
	echo "$out" | grep -q "did not fetch every index; going on" && echo "$out" | grep -q "deps: done" &&
	grep -q "^install -y -qq --no-install-recommends vcap-dummy" "$TMP/m/calls" &&
	[ "$(grep -c '^update' "$TMP/m/calls")" = 3 ]
check mirror_index_broken_unneeded $? "$(why)"

# A failed install (a fetch that broke) is tried again after a fresh update.
touch "$TMP/m/fail-once"
deps_run vcap-dummy
[ $rc = 0 ] && echo "$out" | grep -q "apt-get install failed; updating the lists and trying again in 1 s" &&
	[ "$(grep -c '^install' "$TMP/m/calls")" = 2 ] && echo "$out" | grep -q "deps: done"
check install_retried $? "$(why)"

# A package it needs that only the broken index has: it fails, naming that
# package alone, after the bounded retries.
deps_run vcap-dummy vcap-synced
[ $rc = 1 ] && [ "$dt" -le 30 ] &&
	echo "$out" | grep -q "cannot install (apt has no installable candidate): vcap-synced$" &&
	[ "$(grep -c '^install -y' "$TMP/m/calls")" = 3 ]
check needed_package_named $? "$(why)"

# tests/setup.sh on a machine without make (a fresh Debian / Raspberry Pi OS Lite):
# PATH holds the base tools but no make; the apt-get stub's "install make"
# puts the real make there. setup.sh must install it, then run make (here a
# dry run, -n, of the build).
mkdir -p "$TMP/sys"
for c in sh dirname id mktemp grep cat rm sleep sed date tr head ln; do
	ln -s "$(command -v $c)" "$TMP/sys/$c"
done
MAKE_BIN=$(command -v make)
cat >"$TMP/sys/apt-get" <<EOS
#!/bin/sh
case "\$1" in
update) exit 0 ;;
install) echo "install \$*" >>"$TMP/setup-installed"
	case " \$* " in *" make "*) ln -sf "$MAKE_BIN" "$TMP/sys/make" ;; esac
	exit 0 ;;
esac
exit 1
EOS
cat >"$TMP/sys/dpkg-query" <<EOS
#!/bin/sh
# every package is there but make until the apt-get stub installed it
p=\$(eval echo "\\\${\$#}")
if [ "\$p" = make ] && [ ! -e "$TMP/sys/make" ]; then exit 1; fi
echo "install ok installed"
EOS
chmod +x "$TMP/sys/apt-get" "$TMP/sys/dpkg-query"
if PATH="$TMP/sys" command -v make >/dev/null 2>&1; then
	fail setup_without_make "make is still on the test's PATH"
else
	out=$(PATH="$TMP/sys" sh tests/setup.sh -n BUILD="$TMP/b" all 2>&1); rc=$?
	[ $rc = 0 ] && echo "$out" | grep -q "no make here yet" &&
		grep -q "install -y -qq --no-install-recommends make" "$TMP/setup-installed" &&
		echo "$out" | grep -q "LD    $TMP/b/vcapd"
	check setup_without_make $? "rc=$rc: $(echo "$out" | head -5 | tr '\n' ' ')"
fi
