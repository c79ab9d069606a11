#!/usr/bin/env node
'use strict'
// npm's install step. A packed tarball carries the native addon already and this does nothing.
// In a checkout of the redelay repository (`npm install ./bindings-node`) there is no addon yet:
// build it from the Rust sources with cargo and put it where index.js looks for it.
//
//   node scripts/install.js            build unless the addon is there
//   node scripts/install.js --force    build even if it is there
//   REDELAY_NODE_PROFILE=dev           build the dev profile (faster to build, slower to run)

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const here = path.resolve(__dirname, '..')

function platformSuffix() {
  const { platform, arch } = process
  if (platform === 'linux') {
    let musl
    try {
      musl = !process.report.getReport().header.glibcVersionRuntime
    } catch {
      musl = false
    }
    const abi = arch === 'arm' ? 'gnueabihf' : musl ? 'musl' : 'gnu'
    return `linux-${arch}-${abi}`
  }
  if (platform === 'darwin') return `darwin-${arch}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  if (platform === 'freebsd') return `freebsd-${arch}`
  return `${platform}-${arch}`
}

const target = path.join(here, `redelay.${platformSuffix()}.node`)
const force = process.argv.includes('--force')

if (!force && fs.existsSync(target)) process.exit(0)
if (process.env.NAPI_RS_NATIVE_LIBRARY_PATH) process.exit(0)

if (!fs.existsSync(path.join(here, 'Cargo.toml'))) {
  console.error(
    `redelay: no native addon for ${process.platform}-${process.arch} in this package ` +
      `(${path.basename(target)}), and no Rust sources to build one from.`,
  )
  process.exit(1)
}

const profile = process.env.REDELAY_NODE_PROFILE === 'dev' ? 'dev' : 'release'
const cargo = process.env.CARGO || 'cargo'
console.error(
  `redelay: building the native addon with cargo (${profile} profile); this takes a few minutes the first time`,
)
const r = spawnSync(
  cargo,
  ['build', '-p', 'redelay-node', '--profile', profile, '--message-format=json-render-diagnostics'],
  { cwd: here, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
)
if (r.error) {
  console.error(
    `redelay: cannot run ${cargo}: ${r.error.message}. Install Rust (https://rustup.rs) to build from source.`,
  )
  process.exit(1)
}
if (r.status !== 0) {
  console.error(`redelay: cargo build failed (exit ${r.status})`)
  process.exit(r.status || 1)
}
let artifact = null
for (const line of r.stdout.split('\n')) {
  if (!line.startsWith('{')) continue
  const m = JSON.parse(line)
  if (m.reason === 'compiler-artifact' && m.target && m.target.name === 'redelay_node') {
    artifact = m.filenames.find((f) => /\.(so|dylib|dll)$/.test(f)) || artifact
  }
}
if (!artifact) {
  console.error('redelay: cargo did not report the addon library')
  process.exit(1)
}
fs.copyFileSync(artifact, target + '.tmp')
// The workspace's release profile keeps line tables (for the Rust benchmarks' profiles); an
// npm package does not need them. Strip the copy when `strip` is there (a missing one is fine).
if (process.platform === 'linux') {
  spawnSync('strip', ['--strip-debug', target + '.tmp'], { stdio: 'ignore' })
}
fs.renameSync(target + '.tmp', target)
console.error(`redelay: built ${path.basename(target)}`)
