#!/usr/bin/env node
'use strict'
// Lays out the npm packages of a release the way napi-rs projects publish them (scripts/release.sh
// calls this, then `npm pack`s each folder):
//
//   node scripts/npm-packages.js platform OUT_DIR PLATFORM ADDON.node
//       one package per platform, e.g. `redelay-linux-x64-gnu`: only the addon, with `os`,
//       `cpu` and `libc` so that npm installs it only where it runs.
//   node scripts/npm-packages.js main OUT_DIR PLATFORM...
//       the main `redelay` package: the JavaScript, the types, no addon and no install script;
//       every platform package is an optionalDependency at exactly this version.
//
// The platform packages are named `<main package>-<platform>` because that is the name the
// generated loader (bindings-node/index.js, written by `napi build`) requires.
const fs = require('node:fs')
const path = require('node:path')

const nodeDir = path.resolve(__dirname, '..', 'bindings-node')
const pkg = JSON.parse(fs.readFileSync(path.join(nodeDir, 'package.json'), 'utf8'))

// napi-rs platform names -> npm's os / cpu / libc fields.
function constraints(platform) {
  const [os, cpu, abi] = platform.split('-')
  const c = { os: [os], cpu: [cpu] }
  if (os === 'linux') c.libc = [abi === 'musl' ? 'musl' : 'glibc']
  return c
}

function common() {
  return {
    version: pkg.version,
    license: pkg.license,
    repository: pkg.repository,
    homepage: pkg.homepage,
    engines: pkg.engines,
  }
}

// The licenses (the repository root's LICENSE-MIT and LICENSE-APACHE) go into every package.
const LICENSES = ['LICENSE-MIT', 'LICENSE-APACHE']
function copyLicenses(out) {
  for (const f of LICENSES) fs.copyFileSync(path.join(nodeDir, '..', f), path.join(out, f))
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n')
}

const [cmd, out, ...rest] = process.argv.slice(2)
if (!cmd || !out) {
  console.error('usage: npm-packages.js platform OUT_DIR PLATFORM ADDON | main OUT_DIR PLATFORM...')
  process.exit(64)
}
fs.rmSync(out, { recursive: true, force: true })
fs.mkdirSync(out, { recursive: true })

if (cmd === 'platform') {
  const [platform, addon] = rest
  const file = `${pkg.napi.binaryName}.${platform}.node`
  fs.copyFileSync(addon, path.join(out, file))
  copyLicenses(out)
  writeJson(path.join(out, 'package.json'), {
    name: `${pkg.name}-${platform}`,
    ...common(),
    description: `The ${platform} native addon of ${pkg.name} (installed by npm as an optional dependency of ${pkg.name})`,
    main: file,
    files: [file, ...LICENSES],
    ...constraints(platform),
  })
  fs.writeFileSync(
    path.join(out, 'README.md'),
    `# ${pkg.name}-${platform}\n\nThe native addon of [\`${pkg.name}\`](https://www.npmjs.com/package/${pkg.name}) ` +
      `for ${platform}. Install \`${pkg.name}\`, not this package: npm picks the right platform package itself.\n`,
  )
} else if (cmd === 'main') {
  const platforms = rest
  if (platforms.length === 0) {
    console.error('npm-packages.js main: name at least one platform')
    process.exit(64)
  }
  // Everything the package's "files" names, but the addon (in the platform packages) and the
  // source build (for developers in a checkout).
  const files = pkg.files.filter((f) => !f.endsWith('.node') && !f.startsWith('scripts/'))
  for (const f of files) fs.copyFileSync(path.join(nodeDir, f), path.join(out, f))
  copyLicenses(out)
  const main = { ...pkg }
  delete main.scripts
  delete main.devDependencies
  main.files = [...files, ...LICENSES]
  main.optionalDependencies = Object.fromEntries(platforms.map((p) => [`${pkg.name}-${p}`, pkg.version]))
  writeJson(path.join(out, 'package.json'), main)
} else {
  console.error(`npm-packages.js: unknown command ${cmd}`)
  process.exit(64)
}
