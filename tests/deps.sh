#!/bin/sh
# Install the Debian packages named on the command line that are missing.
# Prints what it installs; does nothing (and needs no network) when all are there.
missing=""
for p in "$@"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$st" in *"ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
echo "deps: installing Debian packages:$missing"
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || exit 1
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
	echo "deps: apt-get install failed for:$missing" >&2; exit 1; }
echo "deps: done"
