#!/usr/bin/env bash
# Makes sure redis-server and redis-cli are installed (Debian's package), installing them
# when missing. Prints nothing when they are already there.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
  exit 0
fi
echo "redelay: installing redis-server from Debian's packages ..." >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
$SUDO apt-get install -y -qq redis-server >&2
# The package starts a system service on 6379 on some systems; redelay's tests use their own.
