#!/usr/bin/env bash
# The README's Rust quick start as a new project would have it: a crate of its own (outside the
# workspace) whose [dependencies] are the README's ```toml block (`path = "core"` pointing at this
# checkout) and whose main.rs is the README's ```rust block, built and run against a real Redis
# (database 5, the quick start's 30-minute delay made 300 ms). It must print its delivery, then
# exit 0 on Ctrl-C (SIGINT), as the block says. The install test runs the other languages' quick
# starts; this one needs Rust, so it runs here. Ends with "quickstart: N passed, M failed" (a
# name scripts/count_tests.py counts: letters, digits and _ only).
#
#   tests/with-redis.sh scripts/readme-rust.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${REDIS_URL:?REDIS_URL is not set: run under tests/with-redis.sh}"
d="$root/target/readme-rust"
rm -rf "$d" && mkdir -p "$d/src"
done_with() { # passed, failed, message
  [ -n "$3" ] && echo "readme-rust: $3"
  echo "quickstart: $1 passed, $2 failed"
  exit "$2"
}

# The first ```LANG block under "## Rust quick start", with each (OLD, NEW) pair replaced; fails
# naming OLD when the README no longer has it (then this script needs updating).
python3 - "$root" "$d" <<'PY' || done_with 0 1 "the README's blocks could not be taken (above)"
import re, sys
root, d = sys.argv[1:3]
text = open(f"{root}/README.md").read()
section = re.search(r"^## Rust quick start\n(.*?)(?=^## )", text, re.S | re.M)
def block(lang, *pairs):
    b = section and re.search(r"^```" + lang + r"\n(.*?)^```", section.group(1), re.S | re.M)
    if not b:
        sys.exit(f"README.md: no ```{lang} block under '## Rust quick start'")
    s = b.group(1)
    for old, new in pairs:
        if old not in s:
            sys.exit(f"README.md: '{old}' is not in the Rust quick start any more: update scripts/readme-rust.sh")
        s = s.replace(old, new)
    return s
deps = block("toml", ('path = "core"', f'path = "{root}/core"'))
main = block(
    "rust",
    ('Client::connect("redis://127.0.0.1:6379")', 'Client::connect(&std::env::var("README_REDIS_URL").unwrap())'),
    ("Duration::from_secs(30 * 60)", "Duration::from_millis(300)"),
)
package = '[package]\nname = "readme-quickstart"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[workspace]\n\n'
open(f"{d}/Cargo.toml", "w").write(package + deps)
open(f"{d}/src/main.rs", "w").write(main)
PY
# The workspace's lock, so that the crate builds with the versions the workspace was tested with
# (and offline); its own target folder beside the workspace's.
cp "$root/Cargo.lock" "$d/Cargo.lock"
echo "== readme-rust: cargo build in $d"
(cd "$d" && cargo build --quiet --offline --target-dir "$d/target") || done_with 0 1 "the quick start does not build"

base_url="$(printf '%s' "$REDIS_URL" | sed -E 's#/[0-9]+$##')"
README_REDIS_URL="$base_url/5" timeout 120 "$d/target/debug/readme-quickstart" >"$d/out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q "close-42 attempt 1 late by" "$d/out" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if ! grep -q "close-42 attempt 1 late by" "$d/out"; then
  kill -9 "$pid" 2>/dev/null
  cat "$d/out"
  done_with 0 1 "no delivery printed"
fi
kill -INT "$pid"
wait "$pid"
status=$?
cat "$d/out"
[ "$status" -eq 0 ] || done_with 0 1 "exit $status after Ctrl-C, not 0"
done_with 1 0 ""
