'use strict'
// The process lifecycle, in child processes: an open subscription keeps the process alive, and
// after close() (or client.close()) it exits by itself; `unref` subscriptions do not hold it.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const path = require('node:path')
const { uniquePrefix } = require('./helpers')
const { Client } = require('..')

const pkg = path.resolve(__dirname, '..')
// The node that child processes run: this one, or REDELAY_TEST_NODE (scripts/arch-suites.sh
// sets its qemu wrapper: under emulation a program cannot start process.execPath itself).
const node = process.env.REDELAY_TEST_NODE || process.execPath

/**
 * Runs `script` in a child node. It is killed after 15 s, or, with `holdAfter: [text, ms]`,
 * `ms` after it printed `text` (to show that it was still running then).
 */
function run(script, { holdAfter, env } = {}) {
  return new Promise((resolve) => {
    const child = spawn(node, ['-e', script], {
      env: { ...process.env, REDELAY_PKG: pkg, PREFIX: uniquePrefix('life'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    const started = Date.now()
    let killed = false
    const kill = () => {
      killed = true
      child.kill('SIGKILL')
    }
    let timer = setTimeout(kill, 15000)
    child.stdout.on('data', (d) => {
      out += d
      if (holdAfter && out.includes(holdAfter[0]) && !child.holding) {
        child.holding = true
        clearTimeout(timer)
        timer = setTimeout(kill, holdAfter[1])
      }
    })
    child.stderr.on('data', (d) => (err += d))
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, killed, out, err, ms: Date.now() - started })
    })
  })
}

const prelude = `
const { Client } = require(process.env.REDELAY_PKG)
const main = async () => {
  const c = await Client.connect(process.env.REDIS_URL, { prefix: process.env.PREFIX })
  const q = c.queue('life')
`
const end = `}
main().catch((e) => { console.error('FAILED', e); process.exitCode = 1 })
`

test('after sub.close() the process exits by itself', async () => {
  const r = await run(`${prelude}
  const sub = await q.subscribe(async (m) => { console.log('got', m.text()) })
  await q.publish('one', { delayMs: 50 })
  await new Promise((res) => setTimeout(res, 500))
  await sub.close()
  console.log('closed')
  // no process.exit: the event loop must empty by itself
${end}`)
  assert.equal(r.killed, false, `the process did not exit by itself: ${r.out} ${r.err}`)
  assert.equal(r.code, 0, r.err)
  assert.match(r.out, /got one\nclosed/)
})

test('after client.close() the process exits by itself', async () => {
  const r = await run(`${prelude}
  await q.subscribe(() => {}, { concurrency: 4 })
  await q.subscribe(() => {})
  await c.close()
  console.log('closed')
${end}`)
  assert.equal(r.killed, false, `the process did not exit by itself: ${r.out} ${r.err}`)
  assert.equal(r.code, 0, r.err)
})

// Issue 13: the core's logs reach Node. Off by default beyond warnings; DEBUG=redelay shows
// them on stderr, e.g. the subscription drained at close.
test('DEBUG=redelay shows the core log lines on stderr; without it they stay quiet', async () => {
  const script = `${prelude}
  const sub = await q.subscribe(async () => {})
  await q.publish('one')
  await new Promise((res) => setTimeout(res, 300))
  await sub.close()
  await c.close()
  console.log('closed')
${end}`
  const loud = await run(script, { env: { DEBUG: 'other,redelay' } })
  assert.equal(loud.code, 0, loud.err)
  assert.match(loud.err, /Z debug redelay::\S+: subscription closed queue="?life"? drained=true/)
  const quiet = await run(script, { env: { DEBUG: '' } })
  assert.equal(quiet.code, 0, quiet.err)
  assert.match(quiet.out, /closed/)
  assert.doesNotMatch(quiet.err, /redelay/)
})

test('an open subscription keeps the process alive', async () => {
  const r = await run(
    `${prelude}
  await q.subscribe(() => {})
  console.log('subscribed')
${end}`,
    { holdAfter: ['subscribed', 1500] },
  )
  assert.match(r.out, /subscribed/, r.err)
  assert.equal(r.killed, true, 'the process should still have been running')
})

test('an unref subscription does not hold the process', async () => {
  const r = await run(`${prelude}
  await q.subscribe(() => {}, { unref: true })
  console.log('subscribed')
${end}`)
  assert.match(r.out, /subscribed/, r.err)
  assert.equal(r.killed, false, 'the process should have exited by itself')
  assert.equal(r.code, 0, r.err)
})

test('an unref subscription closes on the way out: outcomes reach Redis, waiting messages go back', async () => {
  const prefix = uniquePrefix('life')
  const c = await Client.connect(process.env.REDIS_URL, { prefix })
  const q = c.queue('life')
  try {
    await q.publishBatch(Array.from({ length: 20 }, (_, i) => ({ body: `m${i}`, id: `m${i}`, maxAttempts: 1 })))
    const r = await run(
      `${prelude}
  await q.subscribe(async (m) => { console.log('handled', m.id) }, { unref: true, concurrency: 2, prefetch: 10 })
${end}`,
      { env: { PREFIX: prefix } },
    )
    assert.equal(r.killed, false, `the process should have exited by itself: ${r.out} ${r.err}`)
    assert.equal(r.code, 0, r.err)
    const handled = r.out.match(/handled m\d+/g) ?? []
    // Every handled message was acked; nothing stays leased to count an attempt later (with
    // maxAttempts 1 it would have died unseen); what was not handled waits, attempts 0.
    const s = await q.stats()
    assert.deepEqual([s.leased, s.dead, s.total], [0, 0, 20 - handled.length], JSON.stringify(s))
    for (const m of (await q.list('ready')).items) assert.equal(m.attempts, 0, m.id)
  } finally {
    await q.destroy()
    await c.close()
  }
})

test('an unref subscription still delivers while something else holds the process', async () => {
  const r = await run(`${prelude}
  const keep = setTimeout(() => {}, 10000)
  await q.subscribe((m) => { console.log('got', m.text()); clearTimeout(keep) }, { unref: true })
  await q.publish('hello', { delayMs: 100 })
${end}`)
  assert.equal(r.killed, false, `${r.out} ${r.err}`)
  assert.equal(r.code, 0, r.err)
  assert.match(r.out, /got hello/)
})

test('a handler that throws in a child process does not crash it', async () => {
  const r = await run(`${prelude}
  let n = 0
  const sub = await q.subscribe((m) => { n++; if (m.attempt < 3) throw new Error('boom ' + m.attempt) }, { concurrency: 2 })
  await q.publish('x', { backoffBaseMs: 1, backoffMaxMs: 1 })
  while (n < 3) await new Promise((res) => setTimeout(res, 10))
  await sub.close()
  console.log('deliveries', n)
${end}`)
  assert.equal(r.killed, false, `${r.out} ${r.err}`)
  assert.equal(r.code, 0, r.err)
  assert.match(r.out, /deliveries 3/)
})

test('SIGTERM: a worker drains its running handler, then exits by itself', async () => {
  const child = spawn(
    node,
    [
      '-e',
      `${prelude}
  const sub = await q.subscribe(async (m) => {
    console.log('started')
    await new Promise((res) => setTimeout(res, 400))
    console.log('finished')
  })
  process.once('SIGTERM', async () => {
    await sub.close()
    const s = await q.stats()
    await c.close()
    console.log('stopped, left:', s.total)
  })
  await q.publish('work')
${end}`,
    ],
    { env: { ...process.env, REDELAY_PKG: pkg, PREFIX: uniquePrefix('sigterm') }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += d
    if (out.includes('started') && !child.signalled) {
      child.signalled = true
      child.kill('SIGTERM')
    }
  })
  child.stderr.on('data', (d) => (err += d))
  const killer = setTimeout(() => child.kill('SIGKILL'), 15000)
  const [code, signal] = await new Promise((res) => child.on('exit', (c, s) => res([c, s])))
  clearTimeout(killer)
  assert.equal(signal, null, `the worker did not exit by itself: ${out} ${err}`)
  assert.equal(code, 0, err)
  assert.match(out, /started\nfinished\nstopped, left: 0/)
})
