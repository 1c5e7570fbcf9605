#!/bin/sh
# Install the Debian packages named on the command line that are missing.
# Prints what it installs; does nothing (and needs no network) when all are there.
#   sh tests/deps.sh PKG...                  install the missing ones
#   sh tests/deps.sh --download DIR PKG...   apt-get download into DIR (no root)
#   sh tests/deps.sh --update                apt-get update (as below)
# While another apt/dpkg holds its lock (unattended-upgrades, a Raspberry Pi's
# first-boot updates, a packagekit run) it waits, saying so, for at most
# VCAP_APT_LOCK_WAIT seconds (default 600), then gives up with the holder's
# message instead of failing at once.
# A mirror is often mid-sync ("File has unexpected size ... Mirror sync in
# progress?") or a fetch fails once: network steps are tried again after each
# delay in VCAP_APT_BACKOFF (seconds, default "10 30"). A failed
# `apt-get update` does not stop it: apt keeps the lists it had and fetched
# the others, and the index that failed is often one nothing here needs (a
# foreign architecture's security suite). Only a package this needs that
# still cannot be installed stops it, named.
BACKOFF=${VCAP_APT_BACKOFF-10 30}
export DEBIAN_FRONTEND=noninteractive
LOCK_WAIT=${VCAP_APT_LOCK_WAIT:-600}
ERR=$(mktemp "${TMPDIR:-/tmp}/vcap-deps.XXXXXX") || exit 1
trap 'rm -f "$ERR"' EXIT
trap 'exit 1' INT TERM HUP

# apt_get CMD...: runs apt-get CMD, its stderr kept in $ERR; while it fails on
# a lock another process holds, retries every 5 s until LOCK_WAIT s have passed.
apt_get() {
	waited=0
	while :; do
		# shellcheck disable=SC2086
		$SUDO apt-get "$@" 2>"$ERR" && return 0
		grep -qE 'Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock (directory|the administration directory)' "$ERR" ||
			return 1
		if [ "$waited" -ge "$LOCK_WAIT" ]; then
			echo "deps: apt/dpkg is still locked after ${LOCK_WAIT} s; try again once it is done:" >&2
			cat "$ERR" >&2
			return 2
		fi
		[ "$waited" = 0 ] && echo "deps: another apt/dpkg is running ($(grep -m1 -oE 'held by process [0-9]+( \([^)]*\))?' "$ERR" || echo 'lock held')); waiting up to ${LOCK_WAIT} s for it to finish" >&2
		sleep 5
		waited=$((waited + 5))
	done
}

# apt_errors: apt's error lines of the last call, at most 6, indented.
apt_errors() {
	grep -E '^(E|W|Err):' "$ERR" | head -6 | sed 's/^/    /' >&2
}

# with_retries WHAT CMD...: CMD, then again after each delay in BACKOFF while it
# fails (not on a lock held too long: that was waited for already).
with_retries() {
	what=$1; shift
	"$@" && return 0
	rc=$?
	for delay in $BACKOFF; do
		[ "$rc" = 2 ] && return 2
		echo "deps: $what failed; trying again in $delay s:" >&2
		apt_errors
		sleep "$delay"
		"$@" && return 0
		rc=$?
	done
	return "$rc"
}

if [ "$1" = --download ]; then
	dir=$2; shift 2
	SUDO=
	cd "$dir" || exit 1
	with_retries "apt-get download $*" apt_get download -q "$@" >/dev/null && exit 0
	echo "deps: apt-get download failed for: $*" >&2
	apt_errors
	exit 1
fi

# needs_root: sets SUDO, or ends with what to do
needs_root() {
	if [ "$(id -u)" = 0 ]; then
		SUDO=
	elif command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "deps: run this as root (su -c ...), or install sudo first: the packages need apt-get as root" >&2
		exit 1
	fi
}

# refresh: apt-get update, tried again on failure; never fatal by itself.
refresh() {
	with_retries "apt-get update" apt_get update -qq && return 0
	[ $? = 2 ] && exit 1
	echo "deps: apt-get update did not fetch every index; going on with the lists apt has:" >&2
	apt_errors
	return 0
}

if [ "$1" = --update ]; then
	needs_root
	refresh
	exit 0
fi

missing=""
for p in "$@"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$st" in *"ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
echo "deps: installing Debian packages:$missing"
needs_root


install_missing() {
	# shellcheck disable=SC2086
	apt_get install -y -qq --no-install-recommends $missing >/dev/null
}

# An install that failed is tried again after a fresh update (a mirror that
# was mid-sync may be whole now).
refresh
install_missing && { echo "deps: done"; exit 0; }
rc=$?
[ "$rc" = 2 ] && exit 1
for delay in $BACKOFF; do
	echo "deps: apt-get install failed; updating the lists and trying again in $delay s:" >&2
	apt_errors
	sleep "$delay"
	refresh
	install_missing && { echo "deps: done"; exit 0; }
	[ $? = 2 ] && exit 1
done

# Still failing: name the packages apt cannot resolve (a simulated install of
# each one alone), else it was their download.
cp "$ERR" "$ERR.install"
bad=""
for p in $missing; do
	apt-get install -s -qq --no-install-recommends "$p" >/dev/null 2>&1 || bad="$bad $p"
done
if [ -n "$bad" ]; then
	echo "deps: cannot install (apt has no installable candidate):$bad" >&2
else
	echo "deps: apt-get install failed for:$missing (their download failed)" >&2
fi
mv "$ERR.install" "$ERR"
apt_errors
exit 1
