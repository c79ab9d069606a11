'use strict'
// Issue 13 in the Node binding: subscriptions on the core's bridge, options mapped onto the
// core's, errors with their code set natively, MessageInfo's two times, and the core's logs.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { once } = require('node:events')
const { Worker } = require('node:worker_threads')
const { RedelayError, setLogger } = require('..')
const { REDIS_URL, connect, until, sleep, isInvalid } = require('./helpers')

/** A worker thread running `src`, given `workerData` { lib, url, prefix } for client `c`; ended after the test. */
function startWorker(t, src, c) {
  const w = new Worker(src, {
    eval: true,
    workerData: { lib: path.resolve(__dirname, '..'), url: REDIS_URL, prefix: c.prefix },
  })
  t.after(() => w.terminate())
  return w
}

/** The records the main thread's logger gets during the test, and a client. */
async function logged(t, name) {
  const records = []
  setLogger((r) => records.push(r))
  t.after(() => setLogger(null))
  const c = await connect(name)
  t.after(() => c.close())
  return { records, c }
}

test('delayMs and at together are refused by the core, in publish, publishBatch and reschedule', async (t) => {
  const c = await connect('delay-at')
  t.after(() => c.close())
  const q = c.queue('q')
  const both = { delayMs: 10, at: new Date(Date.now() + 1000) }
  await assert.rejects(q.publish('x', both), isInvalid(/^delayMs\/at: give one of them, not both$/))
  await assert.rejects(q.publishBatch([{ body: 'ok' }, { body: 'x', ...both }]), isInvalid(/^message 1: delayMs\/at/))
  const { id } = await q.publish('x', { delayMs: 60000 })
  await assert.rejects(q.reschedule(id, both), isInvalid(/^delayMs\/at/))
  assert.equal((await q.stats()).total, 1, 'nothing else was written')
})

test('errors carry code and kind from the native layer, as RedelayError with a stack', async (t) => {
  const c = await connect('codes')
  t.after(() => c.close())
  const e = await c
    .queue('q')
    .ack('missing', '0123456789abcdef')
    .catch((x) => x)
  assert.ok(e instanceof RedelayError && e instanceof Error)
  assert.equal(e.name, 'RedelayError')
  assert.equal(e.code, 'ERR_REDELAY_LEASE_LOST')
  assert.equal(e.kind, 'LeaseLost')
  assert.match(e.message, /lease lost/)
  assert.doesNotMatch(e.message, /ERR_REDELAY|\|/, 'no code in the message')
  assert.equal(typeof e.stack, 'string')
})

test('MessageInfo: leaseDeadline while leased, diedAt once dead, null otherwise', async (t) => {
  const c = await connect('info')
  t.after(() => c.close())
  const q = c.queue('q')
  const { id } = await q.publish('x', { maxAttempts: 1 })
  const ready = await q.peek(id)
  assert.equal(ready.state, 'ready')
  assert.equal(ready.leaseDeadline, null)
  assert.equal(ready.diedAt, null)
  const [m] = await q.fetch(1, { ttrMs: 5000 })
  const leased = await q.peek(id)
  assert.equal(leased.state, 'leased')
  assert.equal(leased.leaseDeadline.getTime(), m.leaseDeadline.getTime())
  assert.equal(leased.diedAt, null)
  assert.equal(await m.nack({ reason: 'no' }), true)
  const dead = await q.peek(id)
  assert.equal(dead.state, 'dead')
  assert.equal(dead.leaseDeadline, null)
  assert.ok(dead.diedAt instanceof Date && dead.diedAt.getTime() >= leased.publishedAt.getTime())
  assert.ok(!('stateSinceOrUntil' in dead))
})

test('release hands a pulled message back, due now, without counting an attempt', async (t) => {
  const c = await connect('release')
  t.after(() => c.close())
  const q = c.queue('q')
  const { id } = await q.publish('x', { maxAttempts: 1, ttrMs: 60000 })
  const [m] = await q.fetch(1)
  await m.release()
  assert.equal(m.settled, true)
  await assert.rejects(m.release(), (e) => e instanceof RedelayError && e.code === 'ERR_REDELAY_LEASE_LOST')
  const [again] = await q.fetch(1)
  assert.deepEqual([again.id, again.attempt], [id, 1])
  await again.ack()
  assert.equal((await q.stats()).total, 0)
})

test('client options map onto the core: defaultBackoffBaseMs is the client-wide backoff', async (t) => {
  const c = await connect('backoff', { defaultBackoffBaseMs: 60000, defaultBackoffMaxMs: 60000 })
  t.after(() => c.close())
  const q = c.queue('q')
  const { id } = await q.publish('x')
  const [m] = await q.fetch(1)
  await m.nack()
  const info = await q.peek(id)
  assert.equal(info.state, 'scheduled')
  assert.ok(info.dueAt.getTime() - Date.now() > 30000, 'retried after the client default of 60 s')
  await assert.rejects(connect('backoff', { defaultBackoffBaseMs: -1 }), isInvalid(/defaultBackoffBaseMs/))
})

test('setLogger receives the core records; a throwing logger does not crash the process', async (t) => {
  const records = []
  setLogger((r) => {
    records.push(r)
    throw new Error('ignored')
  })
  t.after(() => setLogger(null))
  const c = await connect('logs')
  const sub = await c.queue('logged').subscribe(() => {})
  await sub.close()
  await until(
    () => records.some((r) => r.target.startsWith('redelay') && /subscription closed/.test(r.message)),
    10000,
    'a log record',
  )
  const r = records.find((x) => /subscription closed/.test(x.message))
  assert.equal(r.level, 'debug')
  assert.match(r.message, /logged/)
  await c.close()
  assert.throws(() => setLogger(() => {}, 'loud'), isInvalid(/level/))
})

// Issue 12: the JS side can go away (here a worker thread that ends): its environment's teardown
// closes the subscription in the core, so later messages are not taken, and nothing hangs.
test('a JS side that is gone: its subscription closes, later messages wait for others', async (t) => {
  const { records, c } = await logged(t, 'gone')
  const q = c.queue('gone-q')
  const src = `
    const { parentPort, workerData: w } = require('node:worker_threads')
    const { Client } = require(w.lib)
    Client.connect(w.url, { prefix: w.prefix })
      .then((c) => c.queue('gone-q').subscribe(() => new Promise(() => {}), { concurrency: 4 }))
      .then((sub) => { globalThis.sub = sub; parentPort.postMessage('subscribed') })`
  const w = startWorker(t, src, c)
  await once(w, 'message')
  await w.terminate()
  const closed = () => records.some((r) => /subscription closed/.test(r.message) && /gone-q/.test(r.message))
  await until(closed, 15000, 'the core to stop the subscription')
  await q.publishBatch([{ body: 'a' }, { body: 'b' }, { body: 'c' }].map((m) => ({ ...m, ttrMs: 600000 })))
  await until(async () => (await q.stats()).ready === 3, 5000, 'the messages to wait')
  const got = await q.fetch(3)
  assert.deepEqual(
    got.map((m) => m.attempt),
    [1, 1, 1],
    'no attempt counted for what was given back',
  )
  await Promise.all(got.map((m) => m.ack()))
})

// A worker terminated while its handlers run: the teardown of its environment abandons its
// subscriptions in the core (nothing waits on JavaScript any more): what no handler took goes
// back at once with no attempt counted, and the running handlers' leases are no longer kept, so
// those messages come back after their ttr instead of staying leased while the process lives.
test('a terminated worker: waiting deliveries go back, running leases lapse after their ttr', async (t) => {
  const c = await connect('terminated')
  t.after(() => c.close())
  const q = c.queue('q')
  await q.publishBatch(Array.from({ length: 6 }, (_, i) => ({ body: `m${i}`, ttrMs: 1000 })))
  const src = `
    const { parentPort, workerData: w } = require('node:worker_threads')
    const { Client } = require(w.lib)
    let started = 0
    const handler = () => { if (++started === 2) parentPort.postMessage('running'); return new Promise(() => {}) }
    Client.connect(w.url, { prefix: w.prefix })
      .then((c) => c.queue('q').subscribe(handler, { concurrency: 2, prefetch: 2 }))`
  const w = startWorker(t, src, c)
  await once(w, 'message')
  await until(async () => (await q.stats()).leased === 4, 5000, 'two running and two prefetched')
  await sleep(2000) // kept past their ttr while the worker lives
  assert.equal((await q.stats()).lapsed, 0)
  await w.terminate()
  await until(async () => (await q.stats()).lapsed === 2, 10000, 'the running leases to lapse')
  const s = await q.stats()
  assert.deepEqual([s.ready, s.leased], [4, 2])
  const items = (await q.list('ready')).items
  assert.deepEqual(
    items.map((m) => m.attempts),
    [0, 0, 0, 0],
  )
})

// Each environment has its own logger: a worker's setLogger did replace the one sink of the
// process (the main thread's stopped getting records), and once the worker ended nothing was
// logged anywhere. Now both get the records, and the worker's goes with it.
test("a worker's setLogger keeps the main thread's logger, and goes with the worker", async (t) => {
  const { records, c } = await logged(t, 'worker-logger')
  // A debug record the core logs on demand, naming the queue.
  const closedRecord = async (name) => {
    await (await c.queue(name).subscribe(() => {})).close()
    const seen = (r) => /subscription closed/.test(r.message) && r.message.includes(name)
    await until(() => records.some(seen), 15000, `the main thread's record of ${name}`)
  }
  const src = `
    const { parentPort, workerData: w } = require('node:worker_threads')
    const { setLogger } = require(w.lib)
    setLogger((r) => parentPort.postMessage(r.message))
    parentPort.on('message', () => {}) // keeps the worker alive (a logger does not) until terminated
    parentPort.postMessage('set')`
  const w = startWorker(t, src, c)
  const workerGot = []
  w.on('message', (m) => workerGot.push(m))
  await until(() => workerGot.includes('set'), 15000, 'the worker to set its logger')
  await closedRecord('while-worker-logs')
  await until(
    () => workerGot.some((m) => /subscription closed/.test(m) && m.includes('while-worker-logs')),
    15000,
    "the worker's record",
  )
  await w.terminate()
  await closedRecord('after-worker-ended')
})

// Streams a terminated worker had open. One whose next() waited for a message went on
// fetching for the dead worker: it leased the next message published (handed to an environment
// that was gone, so leased until its ttr, an attempt counted) and went on fetching for as long
// as the process lived. The teardown of the worker's environment now ends (abandons) its
// streams: a waiting fetch stops, and what a stream fetched and did not hand out goes back at
// once, no attempt counted; what it handed out keeps its lease.
test("a terminated worker's open message streams stop and give back what they had not handed out", async (t) => {
  const c = await connect('worker-stream')
  t.after(() => c.close())
  const [q, idle] = [c.queue('q'), c.queue('idle')]
  await q.publishBatch(['a', 'b', 'c', 'd'].map((id) => ({ body: id, id, ttrMs: 600000 })))
  const src = `
    const { parentPort, workerData: w } = require('node:worker_threads')
    const { Client } = require(w.lib)
    Client.connect(w.url, { prefix: w.prefix }).then(async (c) => {
      globalThis.waiting = c.queue('idle').messages({ waitMs: 600000 })
      globalThis.waiting.next() // waits: nothing is published on 'idle' while the worker lives
      globalThis.stream = c.queue('q').messages({ batch: 4 })
      const { value } = await globalThis.stream.next()
      parentPort.postMessage(value.id)
    })
    parentPort.on('message', () => {}) // alive until terminated`
  const w = startWorker(t, src, c)
  const [taken] = await once(w, 'message')
  assert.equal(taken, 'a')
  assert.equal((await q.stats()).leased, 4, 'the stream holds the other three')
  await w.terminate()
  await until(async () => (await q.stats()).ready === 3, 15000, 'the untaken messages to come back')
  for (const id of ['b', 'c', 'd']) {
    const m = await q.peek(id)
    assert.deepEqual([m.state, m.attempts], ['ready', 0], id)
  }
  assert.equal((await q.peek('a')).state, 'leased', 'the taken one keeps its lease, up to its ttr')
  // Published after the worker is gone: nothing of the worker's leases them.
  await idle.publishBatch(['x', 'y'].map((id) => ({ body: id, id, ttrMs: 600000 })))
  await until(async () => (await idle.stats()).ready === 2, 15000, "'idle' to have both ready")
  const got = await idle.fetch(2, { waitMs: 0 })
  assert.deepEqual(
    got.map((m) => [m.id, m.attempt]),
    [
      ['x', 1],
      ['y', 1],
    ],
    'both first attempts, for this client',
  )
  await Promise.all(got.map((m) => m.ack()))
})

test('expiry options map onto the core: expiresInMs, expiresAt (a Date), dropOnExpiry', async (t) => {
  const c = await connect('expiry')
  t.after(() => c.close())
  const q = c.queue('q')
  await assert.rejects(
    q.publish('x', { expiresInMs: 1000, expiresAt: new Date() }),
    isInvalid(/^expiresInMs\/expiresAt: give one of them, not both$/),
  )
  await assert.rejects(q.publish('x', { expiresAt: 'soon' }), isInvalid(/expiresAt/))
  const { id } = await q.publish('x', { expiresAt: new Date(Date.now() + 60000), dropOnExpiry: true })
  assert.equal((await q.peek(id)).state, 'ready')
})

test("fetch's max is optional: without it a fetch leases the core's default, one", async (t) => {
  const c = await connect('fetch-default')
  t.after(() => c.close())
  const q = c.queue('q')
  await q.publishBatch([
    { body: 'a', id: 'a' },
    { body: 'b', id: 'b' },
    { body: 'c', id: 'c' },
    { body: 'd', id: 'd' },
  ])
  assert.deepEqual(
    (await q.fetch()).map((m) => m.id),
    ['a'],
  )
  assert.deepEqual(
    (await q.fetch(undefined, { waitMs: 0 })).map((m) => m.id),
    ['b'],
  )
  assert.deepEqual(
    (await c.fetch(['q'])).map((m) => m.id),
    ['c'],
  )
  assert.deepEqual(
    (await q.fetch(10, { waitMs: 100 })).map((m) => m.id),
    ['d'],
  )
})

test('a negative duration is refused in the core words, the field spelled as Node spells it', async (t) => {
  const c = await connect('negative-ms')
  t.after(() => c.close())
  const q = c.queue('q')
  await assert.rejects(q.publish('x', { delayMs: -5 }), isInvalid(/^delayMs: must not be negative, got -5 ms$/))
  await assert.rejects(q.publish('x', { ttrMs: -0.5 }), isInvalid(/^ttrMs: must not be negative, got -0.5 ms$/))
  await assert.rejects(q.fetch(1, { waitMs: -1 }), isInvalid(/^waitMs: must not be negative, got -1 ms$/))
})
