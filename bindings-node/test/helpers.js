'use strict'
// Shared by the tests: a real Redis from tests/with-redis.sh (REDIS_URL), a fresh prefix per test.
const { Client, RedelayError } = require('..')
const net = require('node:net')
const { spawn, spawnSync } = require('node:child_process')

const REDIS_URL = process.env.REDIS_URL
if (!REDIS_URL) throw new Error('REDIS_URL is not set: run the tests under tests/with-redis.sh')

let n = 0
/** A unique key prefix, so that tests never see each other's messages. */
function uniquePrefix(name) {
  n += 1
  return `node-${name}-${process.pid}-${n}-${Date.now() % 100000}`.replace(/[^A-Za-z0-9_.:-]/g, '_')
}

async function connect(name, opts = {}) {
  return Client.connect(REDIS_URL, { prefix: uniquePrefix(name), ...opts })
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Waits until `cond()` is true, failing after `ms`. */
async function until(cond, ms = 5000, what = 'condition') {
  const end = Date.now() + ms
  for (;;) {
    if (await cond()) return
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

/** Runs redis-cli against the test Redis; returns its output (throws when it fails). */
function redisCli(...args) {
  const r = spawnSync('redis-cli', ['-u', REDIS_URL, ...args], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${r.stderr || r.error}`)
  return r.stdout.trim()
}

/**
 * A redis-server of the test's own on a free 127.0.0.1 port, to freeze (SIGSTOP) without
 * disturbing the other tests. `close()` stops it.
 */
async function privateRedis() {
  const port = await closedPort()
  const child = spawn(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  )
  const url = `redis://127.0.0.1:${port}`
  const end = Date.now() + 5000
  for (;;) {
    const r = spawnSync('redis-cli', ['-u', url, 'ping'], { encoding: 'utf8' })
    if (r.stdout && r.stdout.trim() === 'PONG') break
    if (Date.now() > end) throw new Error(`redis-server on port ${port} did not start`)
    await sleep(20)
  }
  return {
    url,
    freeze: () => child.kill('SIGSTOP'),
    close: async () => {
      child.kill('SIGCONT')
      child.kill('SIGKILL')
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)))
    },
  }
}

/** A TCP port on 127.0.0.1 with nothing listening. */
async function closedPort() {
  const server = net.createServer()
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const port = server.address().port
  await new Promise((r) => server.close(r))
  return port
}

/** An assert.rejects/throws check: an InvalidArgument RedelayError whose message matches `words`. */
const isInvalid = (words) => (e) => e instanceof RedelayError && e.kind === 'InvalidArgument' && words.test(e.message)

/**
 * A TCP proxy in front of the test Redis (core/tests/common's FaultProxy, for the binding's
 * tests): `dropNextRequestWith(pattern)` makes the next request holding `pattern` never reach
 * Redis, its connection dropped, so that a long run fails in the middle. `close()` stops it.
 */
async function faultProxy() {
  const upstream = new URL(REDIS_URL)
  const p = { cut: null, dropped: 0, sockets: new Set() }
  const server = net.createServer((conn) => {
    const up = net.connect(Number(upstream.port) || 6379, upstream.hostname)
    p.sockets.add(conn).add(up)
    let tail = Buffer.alloc(0)
    conn.on('data', (chunk) => {
      // A pattern split between two reads is found too; the part of the request already sent
      // is never a whole command, so Redis runs none.
      if (p.cut !== null && Buffer.concat([tail, chunk]).includes(p.cut)) {
        p.cut = null
        p.dropped += 1
        conn.destroy()
        up.destroy()
        return
      }
      tail = chunk.subarray(-64)
      up.write(chunk)
    })
    up.on('data', (chunk) => conn.write(chunk))
    for (const [a, b] of [
      [conn, up],
      [up, conn],
    ]) {
      a.on('error', () => b.destroy())
      a.on('close', () => {
        b.destroy()
        p.sockets.delete(a)
      })
    }
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = new URL(REDIS_URL)
  url.hostname = '127.0.0.1'
  url.port = String(server.address().port)
  p.url = url.toString()
  p.dropNextRequestWith = (pattern) => {
    p.cut = Buffer.from(pattern)
  }
  p.close = () => {
    server.close()
    for (const s of p.sockets) s.destroy()
  }
  return p
}

module.exports = {
  REDIS_URL,
  uniquePrefix,
  connect,
  sleep,
  until,
  redisCli,
  privateRedis,
  closedPort,
  isInvalid,
  faultProxy,
}
