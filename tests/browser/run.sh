#!/usr/bin/env bash
# Browser tests of the dashboard (tests/browser/dashboard.test.mjs) in Debian's headless Chromium,
# driven by playwright-core, against `redelay serve` of this checkout and the launcher's Redis.
# Installs what it needs on a fresh machine: the chromium package (when missing; as root) and the
# locked npm packages. Prints node's TAP summary ("# pass N" / "# fail N").
#
#   tests/browser/run.sh                 the tests
#   tests/browser/run.sh --screenshots   docs/dashboard-overview.png, -queue.png and -message.png
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
if [ -z "${REDIS_URL:-}" ]; then
  exec tests/with-redis.sh bash "$0" "$@"
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "browser: installing Debian's chromium" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
(cd tests/browser && npm ci --loglevel=error >/dev/null)
cargo build --quiet -p redelay-cli
export REDELAY_BIN="$root/target/debug/redelay" CHROMIUM="$(command -v chromium)"
cd tests/browser
if [ "${1:-}" = "--screenshots" ]; then
  exec node screenshots.mjs
fi
exec node --test --test-reporter=tap --test-concurrency=1 dashboard.test.mjs
