'use strict'
// Shared by the tests: a real Redis from tests/with-redis.sh (REDIS_URL), a fresh prefix per test.
const { Client } = require('..')
const net = require('node:net')

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

/**
 * A TCP server on 127.0.0.1 that speaks just enough RESP for a client to connect (it answers
 * +OK / PONG), and then answers script calls per `mode`: 'silent' never answers (a hung
 * Redis), 'error' answers with an error reply.
 */
async function fakeRedis(mode) {
  const sockets = new Set()
  const server = net.createServer((s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => {})
    let buf = ''
    s.on('data', (d) => {
      buf += d.toString('latin1')
      for (;;) {
        const cmd = parseCommand(buf)
        if (!cmd) break
        buf = buf.slice(cmd.used)
        const name = (cmd.args[0] || '').toUpperCase()
        if (name === 'EVALSHA' || name === 'EVAL' || name === 'SCRIPT' || name === 'SADD') {
          if (mode === 'error') s.write('-ERR fake redis refuses scripts\r\n')
        } else if (name === 'PING') {
          s.write('+PONG\r\n')
        } else if (name === 'SUBSCRIBE' || name === 'PSUBSCRIBE') {
          // never confirm
        } else {
          s.write('+OK\r\n')
        }
      }
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `redis://127.0.0.1:${server.address().port}`,
    close: () => {
      for (const s of sockets) s.destroy()
      return new Promise((r) => server.close(r))
    },
  }
}

function parseCommand(buf) {
  if (!buf.startsWith('*')) {
    const end = buf.indexOf('\r\n')
    if (end < 0) return null
    return { args: buf.slice(0, end).split(' '), used: end + 2 }
  }
  let i = buf.indexOf('\r\n')
  if (i < 0) return null
  const count = Number(buf.slice(1, i))
  let pos = i + 2
  const args = []
  for (let k = 0; k < count; k++) {
    const e = buf.indexOf('\r\n', pos)
    if (e < 0) return null
    const len = Number(buf.slice(pos + 1, e))
    if (buf.length < e + 2 + len + 2) return null
    args.push(buf.slice(e + 2, e + 2 + len))
    pos = e + 2 + len + 2
  }
  return { args, used: pos }
}

/** A TCP port on 127.0.0.1 with nothing listening. */
async function closedPort() {
  const server = net.createServer()
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const port = server.address().port
  await new Promise((r) => server.close(r))
  return port
}

module.exports = { REDIS_URL, uniquePrefix, connect, sleep, until, fakeRedis, closedPort }
