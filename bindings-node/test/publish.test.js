'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const vm = require('node:vm')
const { connect, sleep, until } = require('./helpers')

test('string, Buffer and Uint8Array bodies arrive byte for byte', async (t) => {
  const c = await connect('bodies')
  t.after(() => c.close())
  const q = c.queue('bodies')
  const binary = Buffer.alloc(256)
  for (let i = 0; i < 256; i++) binary[i] = i
  const big = Buffer.alloc(1024 * 1024)
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff
  const view = new Uint8Array([0xde, 0xad, 0xbe, 0xef, 0x00, 0x01]).subarray(1, 5) // a view with an offset
  const cases = [
    ['empty', Buffer.alloc(0), Buffer.alloc(0)],
    ['empty-string', '', Buffer.alloc(0)],
    ['text', 'héllo wörld ✓', Buffer.from('héllo wörld ✓', 'utf8')],
    ['binary', binary, binary],
    ['u8view', view, Buffer.from([0xad, 0xbe, 0xef, 0x00])],
    ['mib', big, big],
  ]
  for (const [id, body] of cases) {
    const p = await q.publish(body, { id })
    assert.deepEqual(p, { id, status: 'stored' })
  }
  // A fetch reply holds about 1 MiB of bodies at most: the MiB body may come in a second one.
  const got = []
  while (got.length < cases.length) {
    const more = await q.fetch(10, { waitMs: 1000 })
    assert.ok(more.length > 0, `only ${got.length} of ${cases.length} arrived`)
    got.push(...more)
  }
  assert.equal(got.length, cases.length)
  const byId = new Map(got.map((m) => [m.id, m]))
  for (const [id, , expected] of cases) {
    const m = byId.get(id)
    assert.ok(m, `message ${id} fetched`)
    assert.ok(Buffer.isBuffer(m.body), `${id}: body is a Buffer`)
    assert.equal(m.body.length, expected.length, `${id}: length`)
    assert.ok(m.body.equals(expected), `${id}: bytes`)
    await m.ack()
  }
  assert.equal(byId.get('text').text(), 'héllo wörld ✓')
  const s = await q.stats()
  assert.equal(s.total, 0)
  assert.equal((await q.verify()).ok, true)
})

test('publish options: headers, maxAttempts, ttr, duplicate and replace', async (t) => {
  const c = await connect('options')
  t.after(() => c.close())
  const q = c.queue('options')
  const p = await q.publish(JSON.stringify({ order: 42 }), {
    id: 'order-42',
    headers: { 'content-type': 'application/json', trace: 'abc' },
    maxAttempts: 3,
    ttrMs: 5000,
  })
  assert.equal(p.status, 'stored')
  assert.equal((await q.publish('other', { id: 'order-42' })).status, 'duplicate')
  const info = await q.peek('order-42')
  assert.equal(info.state, 'ready')
  assert.equal(info.maxAttempts, 3)
  assert.equal(info.ttrMs, 5000)
  assert.deepEqual(info.headers, { 'content-type': 'application/json', trace: 'abc' })
  assert.equal(info.body.toString(), '{"order":42}')
  assert.equal((await q.publish('replaced', { id: 'order-42', replace: true })).status, 'replaced')
  const [m] = await q.fetch(1)
  assert.equal(m.text(), 'replaced')
  assert.equal(m.attempt, 1)
  await m.ack()
  const gen = await q.publish('x')
  assert.match(gen.id, /^\d+$/)
  assert.equal(await q.cancel(gen.id), true)
  assert.equal(await q.cancel(gen.id), false)
})

test('publishBatch stores all or nothing', async (t) => {
  const c = await connect('batch')
  t.after(() => c.close())
  const q = c.queue('batch')
  const msgs = Array.from({ length: 2500 }, (_, i) => ({ body: `m${i}`, delayMs: i % 2 ? 60_000 : 0 }))
  const res = await q.publishBatch(msgs)
  assert.equal(res.length, 2500)
  assert.ok(res.every((r) => r.status === 'stored'))
  let s = await q.stats()
  assert.equal(s.total, 2500)
  assert.equal(s.scheduled, 1250)
  // One bad message refuses the batch, naming it, and nothing is written.
  await assert.rejects(
    q.publishBatch([{ body: 'ok' }, { body: 'bad', maxAttempts: 0 }]),
    (e) => e.code === 'ERR_REDELAY_INVALID_ARGUMENT' && /message 1: maxAttempts/.test(e.message),
  )
  await assert.rejects(q.publishBatch([{ body: 'ok' }, { nobody: 1 }]), { code: 'ERR_REDELAY_INVALID_ARGUMENT' })
  s = await q.stats()
  assert.equal(s.total, 2500)
  assert.deepEqual(await q.publishBatch([]), [])
})

test('fetch, then settle by id and token', async (t) => {
  const c = await connect('settle')
  t.after(() => c.close())
  const q = c.queue('settle')
  await q.publishBatch([
    { body: 'a', id: 'a' },
    { body: 'b', id: 'b' },
    { body: 'c', id: 'c', maxAttempts: 1 },
  ])
  const got = await q.fetch(3, { ttrMs: 2000 })
  assert.equal(got.length, 3)
  const by = Object.fromEntries(got.map((m) => [m.id, m]))
  await q.ack('a', by.a.token)
  await q.extend('b', by.b.token, 10_000)
  assert.equal(await q.nack('b', by.b.token, { retryInMs: 0, reason: 'again' }), false)
  assert.equal(await by.c.nack({ reason: 'give up' }), true)
  const [b2] = await q.fetch(1, { waitMs: 2000 })
  assert.equal(b2.id, 'b')
  assert.equal(b2.attempt, 2)
  assert.equal(b2.lastError, 'again')
  await q.release('b', b2.token)
  await assert.rejects(q.release('b', b2.token), { code: 'ERR_REDELAY_LEASE_LOST' })
  const [b3] = await q.fetch(1, { waitMs: 2000 })
  assert.deepEqual([b3.id, b3.attempt], ['b', 2], 'released: no attempt counted')
  await b3.ack()
  const s = await q.stats()
  assert.deepEqual([s.total, s.dead], [1, 1])
})

test('stats count a lapsed lease until a fetch takes it back', async (t) => {
  const c = await connect('lapsed')
  t.after(() => c.close())
  const q = c.queue('lapsed')
  await q.publish('dies')
  const [m] = await q.fetch(1, { ttrMs: 100 })
  let s = await q.stats()
  // The consumer is gone: wait out its lease on Redis' clock.
  while (s.now <= m.leaseDeadline) {
    await sleep(20)
    s = await q.stats()
  }
  assert.deepEqual([s.total, s.leased, s.lapsed], [1, 1, 1])
  const [again] = await q.fetch(1, { ttrMs: 600_000 })
  assert.equal(again.attempt, 2)
  s = await q.stats()
  assert.deepEqual([s.total, s.leased, s.lapsed], [1, 1, 0])
})

test('dead letters: list, respawn, purge', async (t) => {
  const c = await connect('dead')
  t.after(() => c.close())
  const q = c.queue('dead')
  await q.publishBatch(['x', 'y', 'z'].map((id) => ({ body: id, id, maxAttempts: 1 })))
  for (const m of await q.fetch(3)) await m.nack({ reason: `no ${m.id}` })
  const dead = await q.deadLetters()
  assert.equal(dead.length, 3)
  assert.ok(dead.every((d) => d.state === 'dead' && d.diedAt instanceof Date && d.lastError === `no ${d.id}`))
  assert.equal((await q.deadLetters({ offset: 1, limit: 1 })).length, 1)
  assert.equal(await q.respawn(['x']), 1)
  assert.equal((await q.peek('x')).state, 'ready')
  assert.equal(await q.purgeDead(1), 1)
  assert.equal(await q.purgeDead('all'), 1)
  assert.equal((await q.stats()).dead, 0)
  await assert.rejects(q.respawn('some'), { code: 'ERR_REDELAY_INVALID_ARGUMENT' })
  assert.equal((await q.verify()).ok, true)
  assert.ok((await c.queues()).includes('dead'))
})

test('respawn with a fresh expiry', async (t) => {
  const c = await connect('dead')
  t.after(() => c.close())
  const q = c.queue('respawn-expiry')
  await q.publish('x', { id: 'e', maxAttempts: 1, expiresInMs: 3_600_000 })
  const [m] = await q.fetch(1, { waitMs: 2000 })
  assert.equal(await m.nack({ reason: 'boom' }), true)
  const before = Date.now()
  assert.equal(await q.respawn(['e'], { expiresInMs: 60_000 }), 1)
  const after = Date.now()
  // Counted from the respawn by the Redis clock (this machine's): within a second.
  const at = (await q.peek('e')).expiresAt.getTime()
  assert.ok(at >= before + 59_000 && at <= after + 61_000, `${at} not 60 s after ${before}..${after}`)
  await assert.rejects(q.respawn('all', { expiresInMs: 0 }), {
    code: 'ERR_REDELAY_INVALID_ARGUMENT',
    message: /^expiresInMs: /,
  })
  // Dead again: a respawn may clear the expiry, and a bulk respawn takes the same choices.
  assert.equal(await (await q.fetch(1, { waitMs: 2000 }))[0].nack({ reason: 'boom' }), true)
  assert.equal(await q.respawn(['e'], { clearExpiry: true }), 1)
  assert.equal((await q.peek('e')).expiresAt, null)
  assert.equal(await (await q.fetch(1, { waitMs: 2000 }))[0].nack({ reason: 'boom' }), true)
  assert.equal((await q.bulk({ action: 'respawn', ids: ['e'], expiresInMs: 120_000 })).done, 1)
  assert.ok((await q.peek('e')).expiresAt.getTime() >= before + 119_000)
  await assert.rejects(q.respawn('all', { expiresInMs: 60_000, clearExpiry: true }), {
    code: 'ERR_REDELAY_INVALID_ARGUMENT',
    message: /clear_?[eE]xpiry/,
  })
})

// A header named `__proto__` was stored but dropped on every read: napi's conversions assign
// properties, and assigning `__proto__` sets the prototype. Every read has it as an own data
// property of a plain object now.
test('a header named __proto__ is an own property of plain headers on every read', async (t) => {
  const c = await connect('proto-header')
  t.after(() => c.close())
  const q = c.queue('q')
  const headers = JSON.parse('{"__proto__":"evil","k":"v"}')
  await q.publish('x', { id: 'a', headers, maxAttempts: 1 })
  const check = (h, where) => {
    assert.equal(Object.getPrototypeOf(h), Object.prototype, where)
    assert.deepEqual(Object.getOwnPropertyDescriptor(h, '__proto__'), {
      value: 'evil',
      writable: true,
      enumerable: true,
      configurable: true,
    })
    assert.deepEqual(Object.keys(h).sort(), ['__proto__', 'k'], where)
  }
  check((await q.peek('a')).headers, 'peek')
  check((await q.list('ready')).items[0].headers, 'list')
  check((await q.search({ idPrefix: 'a' })).items[0].headers, 'search')
  const [m] = await q.fetch(1)
  check(m.headers, 'fetch')
  await m.release()
  let seen
  const sub = await q.subscribe((m) => {
    seen = m.headers
    throw new Error('to the dead letters')
  })
  await until(() => seen !== undefined, 5000, 'a delivery')
  await sub.close()
  check(seen, 'subscribe')
  check((await q.deadLetters())[0].headers, 'deadLetters')
})

// Values of another realm (a vm context, Jest's sandbox) are what they are in any realm: a
// Uint8Array body, a Date time, plain option and header objects.
test('values of another realm are taken as those of this one', async (t) => {
  const c = await connect('realm')
  t.after(() => c.close())
  const q = c.queue('q')
  const ctx = vm.createContext({})
  const at = vm.runInContext('new Date(Date.now() + 60000)', ctx)
  const body = vm.runInContext('new Uint8Array([1, 2, 3])', ctx)
  const opts = vm.runInContext('({ id: "a", headers: { k: "v" } })', ctx)
  await q.publish(body, opts)
  const a = await q.peek('a')
  assert.deepEqual([[...a.body], a.headers], [[1, 2, 3], { k: 'v' }])
  await q.publish('x', { id: 'b', at })
  assert.equal((await q.peek('b')).dueAt.getTime(), at.getTime())
  assert.equal((await q.reschedule('b', vm.runInContext('new Date(0)', ctx))).getTime(), 0)
  assert.equal((await q.search({ body: vm.runInContext('new Uint8Array([2, 3])', ctx) })).items[0].id, 'a')
  // Still refused: what is not a plain object, in any realm.
  await assert.rejects(
    q.publish('x', vm.runInContext('new Map()', ctx)),
    /^RedelayError: opts: must be a plain object, got a Map$/,
  )
  await assert.rejects(q.publish('x', vm.runInContext('new (class Opts {})()', ctx)), /got a Opts/)
})
