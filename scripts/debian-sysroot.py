#!/usr/bin/env python3
"""Builds a root directory of another architecture's Debian packages, for running that
architecture's programs under qemu user-mode emulation (`qemu-aarch64 -L ROOT ROOT/usr/bin/...`).

    scripts/debian-sysroot.py ARCH ROOT PACKAGE...     e.g. arm64 target/sysroot-arm64 nodejs

The packages and everything they depend on (first alternative of each dependency) are
downloaded from Debian's archive and unpacked into ROOT with `dpkg-deb -x`; no package is
installed on this machine and dpkg's own state is not touched. The chain of trust is apt's:
InRelease is checked with gpgv against the Debian archive keyring, the package indices against
InRelease's SHA256 sums, every .deb against its index. ROOT/.packages lists what was unpacked;
a second run with the same packages does nothing.

Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian), DEBIAN_SUITE (default: this
machine's release on Debian, bookworm elsewhere), DEBIAN_KEYRING (default
/usr/share/keyrings/debian-archive-keyring.gpg, Debian's package debian-archive-keyring, which
Ubuntu has too).
"""

from __future__ import annotations

import hashlib
import lzma
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Dict, List, Set

# Essential packages that programs find on every Debian system and that only matter to
# maintainer scripts, never to running a binary.
SKIP = {"debconf", "perl-base", "dpkg", "debianutils", "tzdata", "media-types", "readline-common"}


def suite() -> str:
    """DEBIAN_SUITE, else this machine's release when it is Debian, else bookworm."""
    try:
        release = Path("/etc/os-release").read_text()
    except OSError:
        release = ""
    m = re.search(r"^VERSION_CODENAME=(\w+)", release, re.M)
    debian = re.search(r"^ID=debian$", release, re.M)
    return os.environ.get("DEBIAN_SUITE") or (m.group(1) if m and debian else "bookworm")


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=120) as r:
        return r.read()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def release_sums(mirror: str, dist: str, cache: Path) -> Dict[str, str]:
    """SHA256 of each file InRelease lists, once gpgv accepted its signature."""
    signed = cache / "InRelease"
    signed.write_bytes(fetch(f"{mirror}/dists/{dist}/InRelease"))
    keyring = os.environ.get("DEBIAN_KEYRING", "/usr/share/keyrings/debian-archive-keyring.gpg")
    if not Path(keyring).exists():
        sys.exit(f"debian-sysroot: no keyring {keyring}: install the package debian-archive-keyring")
    # As apt does: one valid signature by a key of the keyring suffices (Debian signs with the
    # keys of several releases; gpgv alone fails when any of them is missing), a bad one fails.
    check = subprocess.run(
        ["gpgv", "--status-fd", "1", "--keyring", keyring, str(signed)], capture_output=True, text=True
    )
    status = re.findall(r"^\[GNUPG:\] (\w+)", check.stdout, re.M)
    if "VALIDSIG" not in status or "BADSIG" in status:
        sys.exit(f"debian-sysroot: InRelease of {dist} has no valid signature by {keyring}:\n{check.stderr}")
    text = signed.read_text(errors="replace")
    section = text.split("\nSHA256:\n", 1)[1]
    sums = {}
    for line in section.splitlines():
        parts = line.split()
        if len(parts) != 3 or not line.startswith(" "):
            break
        sums[parts[2]] = parts[0]
    return sums


def index(mirror: str, dist: str, arch: str, sums: Dict[str, str]) -> Dict[str, Dict[str, str]]:
    """Package name -> its stanza, from main's indices for ARCH and for all architectures."""
    packages: Dict[str, Dict[str, str]] = {}
    for a in ("all", arch):  # ARCH's stanza wins over an arch-all one of the same name
        name = f"main/binary-{a}/Packages.xz"
        data = fetch(f"{mirror}/dists/{dist}/{name}")
        if sums.get(name) != sha256(data):
            sys.exit(f"debian-sysroot: {name} does not match the SHA256 in InRelease")
        for stanza in lzma.decompress(data).decode().split("\n\n"):
            fields = dict(re.findall(r"^([A-Za-z0-9-]+): (.*)$", stanza, re.M))
            if "Package" in fields:
                packages[fields["Package"]] = fields
    return packages


def closure(packages: Dict[str, Dict[str, str]], wanted: List[str]) -> List[str]:
    """The wanted packages and their dependencies, transitively (first alternatives)."""
    provides: Dict[str, str] = {}
    for name, fields in packages.items():
        for p in fields.get("Provides", "").split(","):
            provides.setdefault(p.strip().split(" ")[0], name)
    seen: Set[str] = set()
    todo = list(wanted)
    while todo:
        wanted_name = todo.pop()
        name = wanted_name if wanted_name in packages else provides.get(wanted_name, "")
        if not name:
            sys.exit(f"debian-sysroot: no package or provider named {wanted_name!r}")
        if name in seen or name in SKIP:
            continue
        seen.add(name)
        fields = packages[name]
        for field in ("Pre-Depends", "Depends"):
            for dep in filter(None, (d.strip() for d in fields.get(field, "").split(","))):
                todo.append(dep.split("|")[0].strip().split(" ")[0].split(":")[0])
    return sorted(seen)


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    arch, root, wanted = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    mirror = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian").rstrip("/")
    dist = suite()
    stamp = root / ".packages"
    request = f"{mirror} {dist} {arch} {' '.join(sorted(wanted))}\n"
    if stamp.exists() and stamp.read_text().startswith(request):
        return
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        packages = index(mirror, dist, arch, release_sums(mirror, dist, cache))
        names = closure(packages, wanted)
        for name in names:
            fields = packages[name]
            deb = fetch(f"{mirror}/{fields['Filename']}")
            if sha256(deb) != fields["SHA256"]:
                sys.exit(f"debian-sysroot: {fields['Filename']} does not match its index")
            path = cache / f"{name}.deb"
            path.write_bytes(deb)
            subprocess.run(["dpkg-deb", "-x", str(path), str(root)], check=True)
            path.unlink()
    stamp.write_text(request + "".join(f"{n} {packages[n]['Version']}\n" for n in names))
    print(f"debian-sysroot: {len(names)} {arch} packages of {dist} in {root}", file=sys.stderr)


if __name__ == "__main__":
    main()
