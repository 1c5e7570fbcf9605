#!/bin/sh
# First step on a fresh Debian or Raspberry Pi OS Lite, which have no make:
# needs only sh and apt-get. Installs make and the build packages
# (tests/deps.sh: as root or through sudo; waits while another apt runs),
# then runs make with the arguments given, `run` when there are none.
#   sh tests/setup.sh               # = make run: build, start vcapd on 127.0.0.1:8080
#   sh tests/setup.sh test          # = make test
#   sudo sh tests/setup.sh install  # = make install
cd "$(dirname "$0")/.." || exit 1
if ! command -v make >/dev/null 2>&1; then
	echo "setup: no make here yet: installing it"
	sh tests/deps.sh make || exit 1
fi
make --no-print-directory deps-build || exit 1
[ $# = 0 ] && set -- run
exec make "$@"
