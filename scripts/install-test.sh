#!/usr/bin/env bash
# Installs redelay as a user would, with no Rust on the machine, and runs each README quick start
# against a real Redis:
#   python  a fresh venv: `pip install --no-index dist/python/redelay-V-...-manylinux...whl`
#   node    a new npm project: `npm install` of the main and the scoped platform tarballs
#           (`redelay` + `@redelay/linux-x64-gnu`; + TypeScript, since the README's quick start is
#           TypeScript); the addon must load from @redelay/linux-x64-gnu; the quick start is
#           compiled with tsc --strict and run
#   jvm     a new Maven project that names only dev.redelay:redelay:V and the file repository
#           dist/maven (its own local repository, so ~/.m2's copy from `mvn install` is not used)
#   cli     the CLI tarball unpacked, `redelay publish` and `redelay peek` against the same Redis
# cargo and rustc are taken off PATH first (and the test fails if either can still be found).
# Ends with "install: N passed, M failed".
#
#   tests/with-redis.sh scripts/install-test.sh [--build] [--arch ARCH] [DIST]
#
# DIST defaults to dist/. --build first runs `scripts/release.sh --host-only --out DIST` (with
# Rust, before PATH is stripped): what scripts/test.sh does, into target/dist-ci.
#
# --arch ARCH (e.g. aarch64) tests the artifacts of another architecture, as a user on an ARCH
# Linux machine gets them, under qemu user-mode emulation (`qemu-ARCH`, from Debian's qemu-user,
# installed when missing). The Python, Node.js and JDK that run them are Debian's builds for
# ARCH (scripts/qemu-arch.sh; nothing of ARCH is installed on the machine): Python 3.11 imports
# the manylinux wheel (installed by pip for that platform), Node.js 18 loads
# @redelay/linux-ARCH-gnu, the JVM loads the jar's linux-ARCH library; the CLI is run in both
# its glibc and its static musl build. The release check runs it for aarch64 (RELEASING.md);
# it needs what `scripts/release.sh` builds for ARCH.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${REDIS_URL:?REDIS_URL is not set: run under tests/with-redis.sh}"
build=0
dist="$root/dist"
arch="$(uname -m)"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=1; shift ;;
    --arch) arch="$2"; shift 2 ;;
    *) dist="$1"; shift ;;
  esac
done
mkdir -p "$dist"
dist="$(cd "$dist" && pwd)"
version="$("$root/scripts/set-version.sh" --print)"
t0=$SECONDS

if [ "$build" -eq 1 ]; then
  echo "== install: building the host's release artifacts into $dist"
  "$root/scripts/release.sh" --host-only --out "$dist" || { echo "install: 0 passed, 1 failed"; exit 1; }
  echo "== install: release.sh took $((SECONDS - t0)) s"
fi

# ---- another architecture: its interpreters under qemu --------------------------------------------
# The commands that run the artifacts: this machine's own, or ARCH's under emulation (wrappers
# written by scripts/qemu-arch.sh).
python_cmd=() node_cmd=(node) java_cmd=() emu=()
node_arch="$(node -p process.arch)"
if [ "$arch" != "$(uname -m)" ]; then
  case "$arch" in
    aarch64) node_arch=arm64 ;;
    x86_64) node_arch=x64 ;;
  esac
  qemu_dir="$root/target/qemu-$arch"
  "$root/scripts/qemu-arch.sh" "$arch" "$qemu_dir" || { echo "install: 0 passed, 1 failed"; exit 1; }
  emu=("$qemu_dir/run") python_cmd=("$qemu_dir/python3") node_cmd=("$qemu_dir/node") java_cmd=("$qemu_dir/bin/java")
  echo "== install: testing the $arch artifacts under qemu-$arch (scripts/qemu-arch.sh)"
fi

# ---- no Rust from here on ----------------------------------------------------------------------
clean_path=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] || continue
  if [ -e "$d/cargo" ] || [ -e "$d/rustc" ] || [ -e "$d/rustup" ]; then continue; fi
  clean_path="${clean_path:+$clean_path:}$d"
done
export PATH="$clean_path"
unset CARGO RUSTC RUSTUP_TOOLCHAIN CARGO_TARGET_DIR
export CARGO_HOME=/nonexistent/cargo RUSTUP_HOME=/nonexistent/rustup
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

passed=0; failed=0
ok() { echo "== install $1: ok ($2 s)"; passed=$((passed + 1)); }
fail() { echo "== install $1: FAILED: $2"; failed=$((failed + 1)); }

if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  fail no-rust "cargo or rustc is still on PATH ($(command -v cargo rustc | tr '\n' ' '))"
  echo "install: $passed passed, $failed failed"; exit 1
fi
echo "== install: cargo and rustc are off PATH"

work="$(mktemp -d "${TMPDIR:-/tmp}/redelay-install.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Each language gets a database of its own, so the quick starts' queues and ids do not meet.
base_url="$(printf '%s' "$REDIS_URL" | sed -E 's#/[0-9]+$##')"

# readme_block HEADING LANG: the first ```LANG block under "## HEADING" in README.md.
readme_block() {
  python3 - "$root/README.md" "$1" "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = re.search(r"^## " + re.escape(sys.argv[2]) + r"\n(.*?)(?=^## )", text, re.S | re.M)
block = section and re.search(r"^```" + re.escape(sys.argv[3]) + r"\n(.*?)^```", section.group(1), re.S | re.M)
if not block:
    sys.exit(f"README.md: no ```{sys.argv[3]} block under '## {sys.argv[2]}'")
print(block.group(1), end="")
PY
}
# subst FILE OLD NEW: replace, and fail if OLD is not there (the README changed: update this test).
subst() {
  python3 - "$@" <<'PY'
import sys
path, old, new = sys.argv[1:4]
s = open(path).read()
if old not in s:
    sys.exit(f"{path}: '{old}' is not in the README's quick start any more: update scripts/install-test.sh")
open(path, "w").write(s.replace(old, new))
PY
}

# ---- Python ------------------------------------------------------------------------------------
python_test() {
  local t=$SECONDS d="$work/python" wheel
  mkdir -p "$d"
  wheel="$(ls "$dist"/python/redelay-"$version"-cp*-abi3-manylinux*_"$arch".whl 2>/dev/null | head -n 1)"
  [ -n "$wheel" ] || { fail python "no manylinux wheel for $arch in $dist/python"; return; }
  python3 -m venv "$d/venv" || { fail python "python3 -m venv failed"; return; }
  # This machine's Python from the venv; another architecture's with the wheel that pip installed
  # for that platform on its path.
  local py=("$d/venv/bin/python") site="/venv/" pip_for=()
  if [ ${#python_cmd[@]} -gt 0 ]; then
    py=(env "PYTHONPATH=$d/site" "${python_cmd[@]}") site="/site/"
    pip_for=(--no-deps --target "$d/site" --platform "manylinux2014_$arch" --only-binary=:all:)
  fi
  "$d/venv/bin/pip" install --quiet --disable-pip-version-check --no-index ${pip_for[@]+"${pip_for[@]}"} "$wheel" \
    || { fail python "pip install $wheel failed"; return; }
  readme_block Python python >"$d/quickstart.py" || { fail python "README block"; return; }
  subst "$d/quickstart.py" 'import asyncio, redelay' 'import asyncio, os, redelay' &&
    subst "$d/quickstart.py" '"redis://127.0.0.1:6379"' 'os.environ["REDIS_URL"]' &&
    subst "$d/quickstart.py" 'delay=30)' 'delay=0.3)' &&
    subst "$d/quickstart.py" 'asyncio.sleep(60)' 'asyncio.sleep(2)' || { fail python "README changed"; return; }
  (cd "$d" && REDIS_URL="$base_url/1" timeout 120 "${py[@]}" quickstart.py) >"$d/out" 2>&1
  local status=$?
  cat "$d/out"
  [ "$status" -eq 0 ] || { fail python "quick start exited $status"; return; }
  grep -Eq '^[^ ]+ 1 ' "$d/out" || { fail python "the quick start's message was not delivered"; return; }
  # The module came from the install, not from a checkout, on the architecture tested.
  (cd "$d" && "${py[@]}" -c 'import platform, redelay, sys
print(f"redelay from {redelay.__file__} on {platform.machine()}")
sys.exit(0 if sys.argv[1] in redelay.__file__ and platform.machine() == sys.argv[2] else 1)' "$site" "$arch") \
    || { fail python "redelay was not imported from the install ($site) on $arch"; return; }
  ok python $((SECONDS - t))
}

# ---- Node.js -----------------------------------------------------------------------------------
node_test() {
  local t=$SECONDS d="$work/node" main plat
  mkdir -p "$d"
  main="$dist/npm/redelay-$version.tgz"
  # npm packs @redelay/linux-x64-gnu as redelay-linux-x64-gnu-V.tgz.
  local platform pkgname
  platform="linux-$node_arch-gnu"
  plat="$dist/npm/redelay-$platform-$version.tgz"
  [ -f "$main" ] && [ -f "$plat" ] || { fail node "no main or $platform tarball in $dist/npm"; return; }
  pkgname="$(tar -xzOf "$plat" package/package.json | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).name)')"
  [ "$pkgname" = "@redelay/$platform" ] || { fail node "$plat is $pkgname, not the scoped @redelay/$platform"; return; }
  if tar -xzOf "$main" package/package.json | grep -q '"scripts"'; then
    fail node "the main package has scripts (it must not build at install)"; return
  fi
  cat >"$d/package.json" <<JSON
{ "name": "redelay-install-test", "version": "1.0.0", "private": true, "type": "module" }
JSON
  cat >"$d/tsconfig.json" <<'JSON'
{ "compilerOptions": { "strict": true, "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext",
  "types": ["node"], "skipLibCheck": false, "outDir": "out" }, "files": ["quickstart.ts"] }
JSON
  # The platform tarball stands in for the registry's copy of the optional dependency (for
  # another architecture, npm is told the platform it installs for, and --force lets it take
  # a package named directly whose cpu is not this machine's).
  local npm_for=()
  [ "$node_arch" = "$(node -p process.arch)" ] || npm_for=(--force --os=linux --cpu="$node_arch" --libc=glibc)
  (cd "$d" && npm install --no-save --silent ${npm_for[@]+"${npm_for[@]}"} "$plat" "$main" typescript@5.9.3 @types/node@20 >"$d/npm.log" 2>&1) \
    || { cat "$d/npm.log"; fail node "npm install failed"; return; }
  [ -e "$d/node_modules/redelay/package.json" ] && [ ! -e "$d/node_modules/redelay/Cargo.toml" ] \
    || { fail node "redelay was not installed from the tarball"; return; }
  # The main package has no addon: its loader must find the scoped platform package's.
  if find "$d/node_modules/redelay" -name '*.node' | grep . >/dev/null; then
    fail node "the main package carries an addon"; return
  fi
  # shellcheck disable=SC2016 # JavaScript, not shell
  (cd "$d" && "${node_cmd[@]}" -e '
    const loaded = () => Object.keys(require.cache).find((f) => f.endsWith(".node"))
    require("redelay")
    const addon = loaded()
    const want = require.resolve(process.argv[1])
    if (addon !== want) { console.error(`loaded ${addon}, not ${want}`); process.exit(1) }
    console.log(`the loader required ${process.argv[1]} on ${process.arch}: ${addon}`)' "@redelay/$platform") \
    || { fail node "redelay did not load its addon from @redelay/$platform"; return; }
  readme_block Node.js ts >"$d/quickstart.ts" || { fail node "README block"; return; }
  subst "$d/quickstart.ts" 'delayMs: 30 * 60_000' 'delayMs: 300' || { fail node "README changed"; return; }
  (cd "$d" && node node_modules/typescript/bin/tsc -p tsconfig.json) || { fail node "tsc --strict failed on the quick start"; return; }
  # The quick start runs until SIGTERM: wait for its delivery, then stop it as a service would be.
  (cd "$d" && REDIS_URL="$base_url/2" exec "${node_cmd[@]}" out/quickstart.js) >"$d/run.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 300); do
    grep -q 'ms late' "$d/run.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -TERM "$pid" 2>/dev/null
  local status=0
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; wait "$pid"; fail node "did not exit after SIGTERM"; cat "$d/run.log"; return; fi
  wait "$pid" || status=$?
  cat "$d/run.log"
  [ "$status" -eq 0 ] || { fail node "quick start exited $status"; return; }
  grep -Eq '^close-42 1 .* ms late$' "$d/run.log" || { fail node "the quick start's message was not delivered"; return; }
  ok node $((SECONDS - t))
}

# ---- JVM (Maven) -------------------------------------------------------------------------------
jvm_test() {
  local t=$SECONDS d="$work/jvm" m2="$work/m2"
  [ -s "$dist/maven/dev/redelay/redelay/$version/redelay-$version.pom" ] \
    || { fail jvm "no dev.redelay:redelay:$version in $dist/maven"; return; }
  mkdir -p "$d/src/main/kotlin" "$m2"
  # A local repository of its own: Maven must find redelay in dist/maven and nowhere else. It is
  # seeded from ~/.m2 by hard links (no download of Kotlin and the plugins), less redelay.
  if [ -d "$HOME/.m2/repository" ]; then
    cp -al "$HOME/.m2/repository/." "$m2/" 2>/dev/null || rm -rf "${m2:?}"/*
  fi
  rm -rf "$m2/dev/redelay"
  cat >"$d/pom.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>redelay-install-test</artifactId>
  <version>1.0</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <kotlin.version>2.1.21</kotlin.version>
    <java.command>java</java.command>
  </properties>
  <repositories>
    <repository>
      <id>redelay-dist</id>
      <url>file://$dist/maven</url>
    </repository>
  </repositories>
  <dependencies>
    <dependency>
      <groupId>dev.redelay</groupId>
      <artifactId>redelay</artifactId>
      <version>$version</version>
    </dependency>
  </dependencies>
  <build>
    <sourceDirectory>src/main/kotlin</sourceDirectory>
    <plugins>
      <plugin>
        <groupId>org.jetbrains.kotlin</groupId>
        <artifactId>kotlin-maven-plugin</artifactId>
        <version>\${kotlin.version}</version>
        <executions><execution><id>compile</id><goals><goal>compile</goal></goals></execution></executions>
        <configuration><jvmTarget>11</jvmTarget></configuration>
      </plugin>
      <plugin>
        <groupId>org.codehaus.mojo</groupId>
        <artifactId>exec-maven-plugin</artifactId>
        <version>3.5.0</version>
        <configuration>
          <executable>\${java.command}</executable>
          <arguments><argument>-classpath</argument><classpath/><argument>QuickstartKt</argument></arguments>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
XML
  readme_block Kotlin/JVM kotlin >"$d/snippet.kt" || { fail jvm "README block"; return; }
  subst "$d/snippet.kt" '"redis://127.0.0.1:6379"' 'url' || { fail jvm "README changed"; return; }
  {
    cat <<'KT'
import dev.redelay.Client
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

fun main() = runBlocking {
    val url = System.getenv("REDIS_URL")
    // The README's quick start, but for the URL:
KT
    sed 's/^/    /' "$d/snippet.kt"
    cat <<'KT'
    // ...and a message due now is delivered, to this JVM, through the jar's native library.
    Client.connect(url).use { client ->
        val got = CompletableDeferred<String>()
        val q = client.queue("install-test")
        val sub = q.subscribe(concurrency = 1) { msg -> got.complete(msg.id) }
        val published = q.publish("hello".encodeToByteArray(), delay = 200.milliseconds)
        check(withTimeout(10.seconds) { got.await() } == published.id)
        sub.close()
        println("quickstart: delivered ${published.id}")
    }
}
KT
  } >"$d/src/main/kotlin/Quickstart.kt"
  # Another architecture's JVM is a wrapper that Maven's exec plugin starts as `java`.
  local java_for=()
  [ ${#emu[@]} -eq 0 ] || java_for=(-Djava.command="${java_cmd[0]}")
  (cd "$d" && REDIS_URL="$base_url/3" timeout 600 mvn -B -ntp -q -Dmaven.repo.local="$m2" ${java_for[@]+"${java_for[@]}"} package exec:exec) >"$d/out" 2>&1
  local status=$?
  cat "$d/out"
  [ "$status" -eq 0 ] || { fail jvm "maven build or run exited $status"; return; }
  grep -q 'quickstart: delivered ' "$d/out" || { fail jvm "no delivery"; return; }
  grep -q 'redelay-dist' "$m2/dev/redelay/redelay/$version/_remote.repositories" 2>/dev/null \
    || { fail jvm "dev.redelay:redelay did not come from $dist/maven"; return; }
  ok jvm $((SECONDS - t))
}

# ---- CLI ---------------------------------------------------------------------------------------
cli_test() { # LIBC: gnu, or musl (the static build)
  local t=$SECONDS libc="$1" d="$work/cli-$1" tarball triple="$arch-unknown-linux-$1"
  tarball="$(ls "$dist"/cli/redelay-cli-"$version"-"$triple".tar.gz 2>/dev/null | head -n 1)"
  [ -n "$tarball" ] || { fail "cli-$libc" "no CLI tarball for $triple in $dist/cli"; return; }
  mkdir -p "$d" && tar -C "$d" -xzf "$tarball" || { fail "cli-$libc" "cannot unpack $tarball"; return; }
  local bin=(${emu[@]+"${emu[@]}"} "$d/redelay-cli-$version-$triple/redelay")
  REDIS_URL="$base_url/4" "${bin[@]}" publish install-test "hello from the $libc tarball" --id "cli-$libc" >"$d/out" 2>&1 &&
    REDIS_URL="$base_url/4" "${bin[@]}" peek install-test "cli-$libc" >>"$d/out" 2>&1
  local status=$?
  cat "$d/out"
  [ "$status" -eq 0 ] || { fail "cli-$libc" "redelay publish/peek exited $status"; return; }
  grep -q "hello from the $libc tarball" "$d/out" || { fail "cli-$libc" "peek did not show the message"; return; }
  ok "cli-$libc" $((SECONDS - t))
}

python_test
node_test
jvm_test
cli_test gnu
# Another architecture's static musl CLI too (the host's is built only by the release check).
[ ${#emu[@]} -eq 0 ] || cli_test musl
echo "== install: took $((SECONDS - t0)) s in all"
echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
