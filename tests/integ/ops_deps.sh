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

# Any other apt failure is not waited for.
chmod -x "$TMP/bin/apt-get"
printf '#!/bin/sh\necho "E: Some index files failed to download." >&2\nexit 100\n' >"$TMP/bin/apt-get"
chmod +x "$TMP/bin/apt-get"
t0=$(date +%s)
out=$(PATH="$TMP/bin:$PATH" sh tests/deps.sh vcap-fake-pkg 2>&1); rc=$?
dt=$(($(date +%s) - t0))
[ $rc = 1 ] && [ "$dt" -le 2 ] && echo "$out" | grep -q "index files failed" && ! echo "$out" | grep -q waiting
check other_errors_fail_fast $? "rc=$rc after $dt s: $(echo "$out" | tr '\n' ' ')"

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
