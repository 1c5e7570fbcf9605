#!/bin/sh
# The amd64 .deb under a real systemd: a Debian 12 root (debootstrap, kept in
# build/systemd-root) booted by systemd-nspawn on a throwaway overlay, the
# package installed there with dpkg, then
#   starts:       systemctl start vcapd: active (running), /snapshot 200
#                 image/jpeg (no camera, no listen line: the test pattern on
#                 the unit's --default-listen 0.0.0.0:8080), as a dynamic user;
#   nice:         with a user and auth_view = basic, logins run the password
#                 hash on its thread at nice 10 (SystemCallFilter= lets
#                 setpriority through; no "cannot lower" line in the journal);
#   credential:   LoadCredential= uncommented, token_secret_file = token.key:
#                 a ?token= URL serves, none gets 401;
#   restart/stop: systemctl restart gives a new main process that serves;
#                 systemctl reload makes it reread its config (ExecReload=);
#                 systemctl stop ends it in under 5 s (TimeoutStopSec=), by
#                 its own shutdown ("stopped"), nothing killed;
#   template:     vcapd@front with /etc/vcapd/front.conf (its own listen
#                 port) starts, serves and stops;
#   purge:        enabled and running (vcapd and vcapd@front), dpkg --purge
#                 stops both, removes the wants link and leaves no vcapd;
#   security:     systemd-analyze security vcapd, its exposure printed (and
#                 at most 2.0: the hardening is in force).
# The container has its own network namespace (--private-network): port 8080
# is its own, curl runs inside it. Root, systemd-nspawn (systemd-container)
# and debootstrap are needed; without them, or when systemd cannot boot in a
# container here, every check is a SKIP saying why. Downloads (debootstrap,
# once) are retried after each delay in VCAP_APT_BACKOFF like tests/deps.sh.
# Mirror: VCAP_DEBIAN_MIRROR, else the first Debian URI in apt's sources.
# tests/run-all.sh runs it in the suite "deb", after tests/deb_check.sh.
cd "$(dirname "$0")/.." || exit 2
T=deb_systemd
. tests/integ/lib/common.sh
BACKOFF=${VCAP_APT_BACKOFF-10 30}
CACHE=build/systemd-root
# what the root holds: systemd, curl for the checks inside, and the .deb's
# Depends (added below); the list is kept beside it, a different one rebuilds it
BASE="systemd systemd-sysv dbus curl"

case ${VCAP_BUILD:-build} in *asan*) skip all "the package holds the plain build, not ${VCAP_BUILD}"; exit 0 ;; esac
[ "$(id -u)" = 0 ] || { skip all "needs root (systemd-nspawn, debootstrap)"; exit 0; }
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || { skip all "the container root is amd64"; exit 0; }
for c in systemd-nspawn debootstrap pgrep nsenter openssl; do
	command -v $c >/dev/null || { skip all "$c missing (make deps-test installs systemd-container debootstrap)"; exit 0; }
done
V=$(sed -n 's/^#define VCAPD_VERSION "\(.*\)"/\1/p' server/cli.c)
DEB=build/deb/vcapd_${V}_amd64.deb
# made again (3 s): the package must hold this tree's units and daemon
sh tests/deb.sh amd64 >"$TMP/deb.log" 2>&1 || { fail build "$(tr '\n' ' ' <"$TMP/deb.log" | head -c 500)"; exit 1; }

# --- the cached root ---------------------------------------------------------
want=$(echo "$BASE $(dpkg-deb -f "$DEB" Depends | tr ',|' '\n\n' | sed 's/(.*//; s/ //g' | grep -v '^libc6$')" |
	tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')
mirror=${VCAP_DEBIAN_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -v '^[[:space:]]*#' | grep -oE 'https?://[^ ]*/debian/?( |$)' | head -1 | tr -d ' ')}
mirror=${mirror:-http://deb.debian.org/debian}
t0=$(date +%s)
if [ "$(cat "$CACHE.list" 2>/dev/null)" != "$want" ] || [ ! -x "$CACHE/lib/systemd/systemd" ]; then
	rm -rf "$CACHE" "$CACHE.list" "$CACHE.tmp"
	made=
	for delay in 0 $BACKOFF; do
		[ "$delay" = 0 ] || { echo "deb_systemd: debootstrap failed; again in $delay s: $(tail -2 "$TMP/debootstrap.log" | tr '\n' ' ')" >&2; sleep "$delay"; }
		rm -rf "$CACHE.tmp"
		if debootstrap --variant=minbase --include="$(echo $want | tr ' ' ',')" bookworm "$CACHE.tmp" "$mirror" \
			>"$TMP/debootstrap.log" 2>&1; then
			made=1; break
		fi
	done
	if [ -z "$made" ]; then
		# a mirror that cannot be reached is a failure, not a skip: CI reaches Debian's
		fail root "debootstrap bookworm from $mirror: $(tail -3 "$TMP/debootstrap.log" | tr '\n' ' ')"
		rm -rf "$CACHE.tmp"; exit 1
	fi
	rm -rf "$CACHE.tmp/var/cache/apt/archives/"*.deb
	mv "$CACHE.tmp" "$CACHE" && echo "$want" >"$CACHE.list"
	echo "deb_systemd: root made in $(($(date +%s) - t0)) s from $mirror"
fi

# --- boot it on an overlay ---------------------------------------------------
R=$TMP/root
mkdir -p "$R" "$TMP/up" "$TMP/work"
if ! mount -t overlay overlay -o "lowerdir=$(readlink -f "$CACHE"),upperdir=$TMP/up,workdir=$TMP/work" "$R" 2>"$TMP/mount.log"; then
	skip all "no overlayfs here to boot the cached root on: $(cat "$TMP/mount.log")"; exit 0
fi
NS= LEADER=
cleanup_container() {
	if [ -n "$NS" ] && kill -0 "$NS" 2>/dev/null; then
		kill -TERM "$NS" # nspawn powers the container off
		for i in $(seq 100); do kill -0 "$NS" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$NS" 2>/dev/null
		[ -n "$LEADER" ] && kill -9 "$LEADER" 2>/dev/null
		sleep 0.2
	fi
	umount "$R" 2>/dev/null || umount -l "$R" 2>/dev/null
	cleanup
}
trap cleanup_container EXIT
# not /tmp: the booted system mounts a tmpfs there
cp "$DEB" "$R/root/vcapd.deb"

# --register=no --keep-unit: no machined or systemd on the host to register with
systemd-nspawn -D "$R" -b --register=no --keep-unit --private-network --console=pipe \
	-M vcapd-test >"$TMP/nspawn.log" 2>&1 &
NS=$!
t0=$(date +%s)
state=
for i in $(seq 600); do
	kill -0 "$NS" 2>/dev/null || break
	# the container's systemd (before it, an intermediate child of nspawn)
	LEADER=$(pgrep -x -P "$NS" systemd | head -1)
	if [ -n "$LEADER" ]; then
		state=$(nsenter -t "$LEADER" -a systemctl is-system-running 2>/dev/null)
		case $state in running|degraded) break ;; esac
	fi
	sleep 0.1
done
case $state in
running|degraded) ok boot "systemd $state in $(($(date +%s) - t0)) s" ;;
*)
	# the one environment-caused skip: systemd-nspawn cannot boot here
	skip all "systemd-nspawn cannot boot a container here (state '${state:-none}'): $(tr '\n' ' ' <"$TMP/nspawn.log" | head -c 400)"
	exit 0 ;;
esac
# inside CMD...: runs CMD inside the container
inside() { nsenter -t "$LEADER" -a "$@"; }

inside dpkg -i /root/vcapd.deb >"$TMP/dpkg.log" 2>&1
check install $? "$(tr '\n' ' ' <"$TMP/dpkg.log" | head -c 500)"

# snap [CURL ARGS]: /snapshot from inside; sets SC (code), SCT (type), SM (magic)
snap() {
	inside sh -c 'curl -s -o /tmp/snap.jpg -w "%{http_code} %{content_type}" --max-time 10 "$@" http://127.0.0.1:8080/snapshot; echo; od -An -tx1 -N2 /tmp/snap.jpg 2>/dev/null | tr -d " "' \
		sh "$@" >"$TMP/snap.out" 2>&1
	SC=$(sed -n '1s/ .*//p' "$TMP/snap.out") SCT=$(sed -n '1s/^[^ ]* //p' "$TMP/snap.out") SM=$(sed -n 2p "$TMP/snap.out")
}
# up: waits until the unit is active and /snapshot answers (the first frame)
up() {
	for i in $(seq 100); do
		[ "$(inside systemctl is-active vcapd)" = active ] && snap "$@" && [ "$SC" != 000 ] && return 0
		[ "$(inside systemctl is-failed vcapd)" = failed ] && return 1
		sleep 0.1
	done
	return 1
}
prop() { inside systemctl show -P "$1" vcapd; }
journal() { inside journalctl -q -u vcapd --no-pager -o cat; }

# --- starts, serves, as a dynamic user --------------------------------------
inside systemctl start vcapd >"$TMP/start.log" 2>&1
up
[ "$(prop ActiveState)/$(prop SubState)" = active/running ] && [ "$SC" = 200 ] &&
	[ "$SCT" = image/jpeg ] && [ "$SM" = ffd8 ]
check starts_and_serves $? "$(prop ActiveState)/$(prop SubState), /snapshot $SC $SCT ($SM): $(tr '\n' ' ' <"$TMP/start.log") $(journal | tail -8 | tr '\n' ' ')"
pid=$(prop MainPID)
uid=$(inside sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
# DynamicUser= picks from 61184-65519
[ -n "$uid" ] && [ "$uid" -ge 61184 ] && [ "$uid" -le 65519 ] && [ "$(prop DynamicUser)" = yes ]
check dynamic_user $? "main pid $pid uid ${uid:-none}, DynamicUser=$(prop DynamicUser)"

# --- a user, the hash thread's nice, the credential --------------------------
PW=systemd-test-pw
HASH=$(openssl passwd -6 "$PW")
head -c 32 /dev/urandom | base64 >"$R/etc/vcapd/token.key" && chmod 600 "$R/etc/vcapd/token.key"
printf '[server]\nuser = admin:%s\nauth_view = basic,token\ntoken_secret_file = token.key\n' "$HASH" >"$R/etc/vcapd/vcapd.conf"
sed -i 's|^#LoadCredential=token.key:|LoadCredential=token.key:|' "$R/lib/systemd/system/vcapd.service"
inside systemctl daemon-reload
inside systemctl restart vcapd >"$TMP/restart.log" 2>&1
up -u "admin:$PW"
pid2=$(prop MainPID)
[ "$SC" = 200 ] && [ "$SM" = ffd8 ] && [ "$pid2" != "$pid" ] && [ "$pid2" != 0 ]
check restart $? "main pid $pid -> $pid2, /snapshot with the password $SC ($SM): $(tr '\n' ' ' <"$TMP/restart.log") $(journal | tail -6 | tr '\n' ' ')"
# systemctl reload: ExecReload= signals the same process, which rereads its config
inside systemctl reload vcapd >"$TMP/reload.log" 2>&1; rrc=$?
[ "$rrc" = 0 ] && [ "$(prop MainPID)" = "$pid2" ] && [ "$(prop ActiveState)" = active ] &&
	journal | grep -q 'reload: /etc/vcapd/vcapd.conf applied'
check reload $? "rc $rrc, main pid $(prop MainPID) (was $pid2) $(prop ActiveState): $(tr '\n' ' ' <"$TMP/reload.log") $(journal | tail -4 | tr '\n' ' ')"
snap -u admin:wrong
wrong=$SC
snap
[ "$wrong" = 401 ] && [ "$SC" = 401 ]
check auth_in_force $? "wrong password $wrong, none $SC (want 401, 401)"
# nice of each thread of the daemon (field 19 of stat; comm may hold spaces)
nices=$(inside sh -c 'for t in /proc/$1/task/*; do sed "s/.*) //" $t/stat | cut -d" " -f17; done 2>/dev/null' sh "$pid2" | sort | uniq -c | tr -s ' \n' '  ')
! journal | grep -q 'cannot lower its priority' && inside sh -c 'for t in /proc/$1/task/*; do sed "s/.*) //" $t/stat | cut -d" " -f17; done 2>/dev/null' sh "$pid2" | grep -qx 10
check hash_thread_nice10 $? "thread nices (count nice): $nices; journal: $(journal | grep -m1 'priority')"

# a token minted with the same key (root reads the file; the service its copy)
tok=$(inside env CREDENTIALS_DIRECTORY=/etc/vcapd vcapd --config /etc/vcapd/vcapd.conf --make-token view:600 2>"$TMP/tok.err")
inside sh -c 'curl -s -o /tmp/tok.jpg -w "%{http_code}" --max-time 10 "http://127.0.0.1:8080/snapshot?token=$1"' sh "$tok" >"$TMP/tok.code" 2>&1
[ -n "$tok" ] && [ "$(cat "$TMP/tok.code")" = 200 ] && inside test -s /run/credentials/vcapd.service/token.key
check credential_token $? "token '${tok}' $(cat "$TMP/tok.err") -> $(cat "$TMP/tok.code"); credential: $(inside ls -l /run/credentials/vcapd.service/ 2>&1 | tr '\n' ' '); $(journal | grep -i -m2 'token\|credential' | tr '\n' ' ')"

# --- the template unit: one instance per config file ------------------------
printf '[server]\nlisten = 127.0.0.1:8081\n[camera front]\ndevice = test:320x240@10\n' >"$R/etc/vcapd/front.conf"
inside systemctl start vcapd@front >"$TMP/front.log" 2>&1
code=000
for i in $(seq 100); do
	code=$(inside curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://127.0.0.1:8081/snapshot)
	[ "$code" = 200 ] && break
	[ "$(inside systemctl is-failed vcapd@front)" = failed ] && break
	sleep 0.1
done
fa=$(inside systemctl show -P ActiveState vcapd@front)
inside systemctl stop vcapd@front
[ "$code" = 200 ] && [ "$fa" = active ] && [ "$(inside systemctl show -P Result vcapd@front)" = success ] &&
	[ "$(inside systemctl show -P ActiveState vcapd@front)" = inactive ]
check template_instance $? "vcapd@front $fa, /snapshot on 8081 $code: $(tr '\n' ' ' <"$TMP/front.log") $(inside journalctl -q -u vcapd@front --no-pager -o cat | tail -5 | tr '\n' ' ')"

# --- systemd-analyze security ------------------------------------------------
inside systemd-analyze security --no-pager vcapd >"$TMP/sec.log" 2>&1
expo=$(sed -n 's/.*Overall exposure level for vcapd.service: \([0-9.]*\).*/\1/p' "$TMP/sec.log")
[ -n "$expo" ] && awk -v e="$expo" 'BEGIN { exit !(e <= 2.0) }'
check security $? "exposure ${expo:-none} (systemd-analyze security vcapd, at most 2.0): $(tail -3 "$TMP/sec.log" | tr '\n' ' ' | tr -d ':')"

# --- stops cleanly -----------------------------------------------------------
t0=$(date +%s%N)
inside systemctl stop vcapd
ms=$((($(date +%s%N) - t0) / 1000000))
res=$(prop Result) act=$(prop ActiveState)
# Result=success counts a death by SIGTERM too: vcapd's own last line says it
# shut down; nothing was killed, the process started by the restart is gone
[ "$pid2" != 0 ] && ! inside test -d "/proc/$pid2" && [ "$act" = inactive ] && [ "$res" = success ] &&
	[ "$ms" -lt 5000 ] && journal | grep -q '^vcapd: stopped$' && ! journal | grep -q 'SIGKILL\|timed out'
check stop_clean $? "stop took $ms ms, $act, result $res, pid $pid2 $(inside test -d "/proc/$pid2" && echo alive || echo gone); $(journal | tail -4 | tr '\n' ' ')"

# --- enabled and running, then purged: prerm stops and disables it all ------
inside systemctl enable --now vcapd >"$TMP/enable.log" 2>&1
inside systemctl start vcapd@front >>"$TMP/enable.log" 2>&1
up -u "admin:$PW"
en=$(inside systemctl is-enabled vcapd)
inside dpkg --purge vcapd >"$TMP/purge.log" 2>&1; prc=$?
procs=$(inside sh -c 'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = vcapd ] && echo ${p#/proc/}; done')
act=$(inside systemctl is-active vcapd vcapd@front | sort -u | tr '\n' ' ')
[ "$SC" = 200 ] && [ "$en" = enabled ] && [ "$prc" = 0 ] && [ -z "$procs" ] && [ "$act" = "inactive " ] &&
	[ ! -L "$R/etc/systemd/system/multi-user.target.wants/vcapd.service" ] && [ ! -e "$R/lib/systemd/system/vcapd.service" ]
check purge_stops_units $? "before: /snapshot $SC, $en; purge rc $prc, vcapd pids left: ${procs:-none}, units $act, wants link $([ -L "$R/etc/systemd/system/multi-user.target.wants/vcapd.service" ] && echo left || echo gone): $(tr '\n' ' ' <"$TMP/enable.log") $(tr '\n' ' ' <"$TMP/purge.log" | head -c 300)"
