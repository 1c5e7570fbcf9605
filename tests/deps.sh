#!/bin/sh
# Install the Debian packages named on the command line that are missing.
# Prints what it installs; does nothing (and needs no network) when all are there.
# While another apt/dpkg holds its lock (unattended-upgrades, a Raspberry Pi's
# first-boot updates, a packagekit run) it waits, saying so, for at most
# VCAP_APT_LOCK_WAIT seconds (default 600), then gives up with the holder's
# message instead of failing at once.
missing=""
for p in "$@"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$st" in *"ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
echo "deps: installing Debian packages:$missing"
if [ "$(id -u)" = 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	echo "deps: run this as root (su -c ...), or install sudo first: the packages need apt-get as root" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
LOCK_WAIT=${VCAP_APT_LOCK_WAIT:-600}
ERR=$(mktemp "${TMPDIR:-/tmp}/vcap-deps.XXXXXX") || exit 1
trap 'rm -f "$ERR"' EXIT
trap 'exit 1' INT TERM HUP

# apt_get CMD...: runs apt-get CMD (stderr shown on failure); while it fails on a
# lock another process holds, retries every 5 s until LOCK_WAIT s have passed.
apt_get() {
	waited=0
	while :; do
		# shellcheck disable=SC2086
		$SUDO apt-get "$@" 2>"$ERR" && return 0
		if ! grep -qE 'Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock (directory|the administration directory)' "$ERR"; then
			cat "$ERR" >&2
			return 1
		fi
		if [ "$waited" -ge "$LOCK_WAIT" ]; then
			echo "deps: apt/dpkg is still locked after ${LOCK_WAIT} s; try again once it is done:" >&2
			cat "$ERR" >&2
			return 1
		fi
		[ "$waited" = 0 ] && echo "deps: another apt/dpkg is running ($(grep -m1 -oE 'held by process [0-9]+( \([^)]*\))?' "$ERR" || echo 'lock held')); waiting up to ${LOCK_WAIT} s for it to finish" >&2
		sleep 5
		waited=$((waited + 5))
	done
}

apt_get update -qq || exit 1
# shellcheck disable=SC2086
apt_get install -y -qq --no-install-recommends $missing >/dev/null || {
	echo "deps: apt-get install failed for:$missing" >&2; exit 1; }
echo "deps: done"
