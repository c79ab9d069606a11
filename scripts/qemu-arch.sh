#!/usr/bin/env bash
# Prepares running another architecture's programs here, under qemu user-mode emulation, and
# writes wrappers that behave like that architecture's commands:
#
#   scripts/qemu-arch.sh ARCH DIR      e.g. aarch64 target/qemu-aarch64
#
#   DIR/run CMD ARGS...   runs an ARCH executable (its libraries from the sysroot)
#   DIR/python3           Debian's Python 3.11 of ARCH (sys.executable is this wrapper, so a test
#                         that starts `sys.executable` starts ARCH's Python again)
#   DIR/node              Debian's Node.js 18 of ARCH
#   DIR/bin/java          Debian's JDK 17 of ARCH (Maven Surefire's -Djvm= wants a path ending
#                         in bin/java)
#
# qemu-ARCH comes from Debian's qemu-user (installed when missing); the interpreters are
# Debian's packages of ARCH, unpacked into target/sysroot-<Debian arch> by
# scripts/debian-sysroot.py (signatures and checksums checked; nothing of ARCH is installed on
# the machine). Without binfmt_misc a program of ARCH cannot start another one by its path:
# only the wrappers can (Node's process.execPath and Java's java.home name the real binaries).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
arch="${1:?usage: qemu-arch.sh ARCH DIR}"
dir="${2:?usage: qemu-arch.sh ARCH DIR}"
case "$arch" in
  aarch64) deb_arch=arm64 ;;
  x86_64) deb_arch=amd64 ;;
  *) echo "qemu-arch: no Debian architecture known for $arch" >&2; exit 2 ;;
esac
if ! command -v "qemu-$arch" >/dev/null; then
  echo "qemu-arch: installing qemu-user (qemu-$arch) from Debian's packages" >&2
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq qemu-user >&2
fi
sysroot="$root/target/sysroot-$deb_arch"
python3 "$root/scripts/debian-sysroot.py" "$deb_arch" "$sysroot" \
  python3.11-minimal libpython3.11-stdlib nodejs openjdk-17-jre-headless
java="$(ls -d "$sysroot"/usr/lib/jvm/java-17-openjdk-*/bin/java | head -n 1)"
qemu="$(command -v "qemu-$arch")"
mkdir -p "$dir/bin"
dir="$(cd "$dir" && pwd)"
wrapper() { # PATH, then the line that runs
  printf '#!/bin/sh\n# %s under qemu (scripts/qemu-arch.sh)\n%s\n' "$arch" "$2" >"$1"
  chmod +x "$1"
}
wrapper "$dir/run" "exec $qemu -L $sysroot \"\$@\""
wrapper "$dir/python3" "exec $qemu -L $sysroot -0 $dir/python3 $sysroot/usr/bin/python3.11 \"\$@\""
wrapper "$dir/node" "exec $qemu -L $sysroot $sysroot/usr/bin/node \"\$@\""
wrapper "$dir/bin/java" "exec $qemu -L $sysroot $java \"\$@\""
