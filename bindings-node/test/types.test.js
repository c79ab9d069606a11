'use strict'
// The type definitions compile under `tsc --strict` against the examples and test/types-check.ts.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const path = require('node:path')
const fs = require('node:fs')

const root = path.resolve(__dirname, '..')
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')

test('tsc --strict accepts the examples and the API check', () => {
  assert.ok(fs.existsSync(tsc), 'typescript is installed (npm ci)')
  const r = spawnSync(process.execPath, [tsc, '--strict', '-p', path.join(root, 'tsconfig.json')], { encoding: 'utf8' })
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`)
})

test('the declarations also compile with the esnext lib, whose Symbol.asyncDispose they declare too', () => {
  const args = ['--strict', '--noEmit', '--lib', 'esnext', '--types', 'node', '--module', 'node16']
  const r = spawnSync(process.execPath, [tsc, ...args, path.join(root, 'test', 'types-check.ts')], { encoding: 'utf8' })
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`)
})
