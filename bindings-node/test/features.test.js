'use strict'
// Issue 15 in Node: expiry, pause/resume, one subscription over several queues, history, and
// inspection (upcoming, list, search), against the real Redis.
const test = require('node:test')
const assert = require('node:assert/strict')
const { connect, until, sleep, isInvalid } = require('./helpers')

test('expiry: a message not delivered in time becomes a dead letter "expired", or is dropped', async (t) => {
  const c = await connect('expire')
  t.after(() => c.close())
  const q = c.queue('q')
  const kept = await q.publish('late', { delayMs: 10, expiresInMs: 30 })
  const at = new Date(Date.now() + 120_000)
  const info = await q.peek((await q.publish('far', { delayMs: 60_000, expiresAt: at })).id)
  assert.ok(info.expiresAt instanceof Date && info.expiresAt.getTime() === at.getTime())
  await q.publish('gone', { delayMs: 10, expiresInMs: 30, dropOnExpiry: true })
  await sleep(100)
  assert.deepEqual(await q.fetch(10), [], 'an expired message is never handed out')
  // A delivery knows its expiry too (null without one).
  await q.publish('soon', { id: 'soon', expiresAt: at })
  await q.publish('forever', { id: 'forever' })
  const got = await q.fetch(2, { waitMs: 2000 })
  assert.deepEqual(
    got.map((m) => [m.id, m.expiresAt?.getTime() ?? null]),
    [
      ['soon', at.getTime()],
      ['forever', null],
    ],
  )
  await Promise.all(got.map((m) => m.ack()))
  const dead = await q.deadLetters()
  assert.deepEqual(
    dead.map((m) => m.id),
    [kept.id],
  )
  assert.match(dead[0].lastError, /^expired/)
  assert.equal((await q.stats()).total, 2, 'the dropped one is gone, the far one waits')
  await assert.rejects(q.publish('x', { delayMs: 5000, expiresInMs: 1000 }), isInvalid(/expire/))
})

test('pause and resume: consumers stop receiving, publishes go on, stats shows it', async (t) => {
  const c = await connect('pause')
  t.after(() => c.close())
  const q = c.queue('q')
  const got = []
  const sub = await q.subscribe((m) => void got.push(m.text()))
  t.after(() => sub.close())
  assert.equal(await q.pause(), true)
  assert.equal(await q.pause(), false, 'already paused')
  assert.equal((await q.stats()).paused, true)
  await q.publish('while paused')
  await sleep(300)
  assert.deepEqual(got, [], 'nothing delivered while paused')
  assert.deepEqual(await q.fetch(1), [], 'fetch takes nothing either')
  assert.equal(await q.resume(), true)
  assert.equal(await q.resume(), false, 'not paused')
  await until(() => got.length === 1, 5000, 'the delivery after resume')
  assert.deepEqual(got, ['while paused'])
  assert.equal((await q.stats()).paused, false)
})

test('client.subscribe over several queues: strict priority, each delivery says its queue', async (t) => {
  const c = await connect('multi')
  t.after(() => c.close())
  const [urgent, normal] = [c.queue('urgent'), c.queue('default')]
  await normal.publishBatch([{ body: 'n1' }, { body: 'n2' }])
  await urgent.publishBatch([{ body: 'u1' }, { body: 'u2' }])
  const got = []
  const sub = await c.subscribe(['urgent', 'default'], (m) => void got.push(`${m.queue}:${m.text()}`), {
    concurrency: 1,
  })
  t.after(() => sub.close())
  assert.deepEqual(sub.queues, ['urgent', 'default'])
  await until(() => got.length === 4, 5000, 'four deliveries')
  assert.deepEqual(got, ['urgent:u1', 'urgent:u2', 'default:n1', 'default:n2'])
  // A publish to either wakes the subscription.
  await normal.publish('n3', { delayMs: 50 })
  await until(() => got.length === 5, 5000, 'the later delivery')
  assert.equal(got[4], 'default:n3')
})

test('client.fetch from several queues: the first with due messages, each message says its queue', async (t) => {
  const c = await connect('fetch-many')
  t.after(() => c.close())
  // `high` is sharded: client.fetch opens it by name, with the shard count stored in Redis.
  const [high, low] = [c.queue('high', { shards: 4 }), c.queue('low')]
  await low.publishBatch([{ body: 'l1' }, { body: 'l2' }])
  await high.publishBatch([{ body: 'h1' }, { body: 'h2' }, { body: 'h3' }])
  const seen = (ms) => ms.map((m) => `${m.queue}:${m.text()}`).sort()
  const first = await c.fetch(['high', 'low'], 2)
  assert.equal(first.length, 2)
  assert.ok(
    first.every((m) => m.queue === 'high'),
    `the high queue first: ${seen(first)}`,
  )
  // One call takes from one queue: the high one's last message, not topped up from the low one.
  const second = await c.fetch(['high', 'low'], 10)
  assert.deepEqual(seen([...first, ...second]), ['high:h1', 'high:h2', 'high:h3'])
  const third = await c.fetch(['high', 'low'], 10)
  assert.deepEqual(seen(third), ['low:l1', 'low:l2'], 'then the low queue')
  await Promise.all([...first, ...second, ...third].map((m) => m.ack()))
  assert.deepEqual(await c.fetch(['high', 'low'], 10), [], 'nothing due: resolves at once with none')
  assert.equal((await high.stats()).total + (await low.stats()).total, 0, 'every fetched message was acked')

  // waitMs: waits for a message published meanwhile, to any of the queues.
  const waiting = c.fetch(['high', 'low'], 10, { waitMs: 30_000 })
  await sleep(50)
  await low.publish('late')
  const late = await waiting
  assert.deepEqual(seen(late), ['low:late'])
  await late[0].ack()

  // ttrMs: every message is leased for that long instead of its own ttr (the client's 30 s).
  await high.publish('own ttr', { id: 'own' })
  const [own] = await c.fetch(['high', 'low'], 1)
  assert.equal(own.leaseDeadline.getTime() - own.deliveredAt.getTime(), 30_000)
  await high.publish('leased', { id: 'leased' })
  const [m] = await c.fetch(['low', 'high'], 1, { ttrMs: 120_000 })
  assert.equal(m.id, 'leased')
  assert.equal(m.queue, 'high')
  assert.equal(m.leaseDeadline.getTime() - m.deliveredAt.getTime(), 120_000)
  assert.equal((await high.peek('leased')).leaseDeadline.getTime(), m.leaseDeadline.getTime())
  await Promise.all([own.ack(), m.ack()])

  // Bad arguments: a RedelayError naming the field.
  const fetch = (...a) => c.fetch(...a)
  await assert.rejects(fetch(['high', 'low'], 0), isInvalid(/^max: must be 1 to 1000, got 0$/))
  await assert.rejects(fetch(['high', 'low'], 1001), isInvalid(/^max: must be 1 to 1000/))
  await assert.rejects(fetch(['high', 'low'], 'ten'), isInvalid(/^max/))
  await assert.rejects(fetch(['high'], 1, { waitMs: -1 }), isInvalid(/^waitMs/))
  await assert.rejects(fetch(['high'], 1, { waitMs: Infinity }), isInvalid(/^waitMs: must be a finite number/))
  await assert.rejects(fetch(['high'], 1, { ttrMs: 1 }), isInvalid(/^ttrMs/))
  await assert.rejects(fetch(['high'], 1, { wait: 10 }), isInvalid(/^wait: unknown field/))
  await assert.rejects(fetch(['high'], 1, 5), isInvalid(/^opts: must be a plain object, got number$/))
  await assert.rejects(fetch('high', 1), isInvalid(/^queues: must be an array of names, got string$/))
  await assert.rejects(fetch(['high', 7], 1), isInvalid(/^queues\[1\]: must be a string, got number$/))
  await assert.rejects(fetch([], 1), isInvalid(/^queues: give 1 to/))
  await assert.rejects(fetch(['high', 'high'], 1), isInvalid(/^queues: "high" is given twice$/))
  await assert.rejects(fetch(['bad name'], 1), isInvalid(/queue name/))
})

test('client.subscribe by weights: every queue is served, the heavier more often', async (t) => {
  const c = await connect('weights')
  t.after(() => c.close())
  const names = ['a', 'b']
  for (const n of names) await c.queue(n).publishBatch(Array.from({ length: 60 }, () => ({ body: n })))
  const seen = { a: 0, b: 0 }
  const sub = await c.subscribe({ a: 5, b: 1 }, (m) => void (seen[m.queue] += 1), { concurrency: 1, prefetch: 0 })
  t.after(() => sub.close())
  await until(() => seen.a + seen.b >= 36, 10000, '36 deliveries')
  await sub.close()
  assert.ok(seen.a > seen.b && seen.b > 0, JSON.stringify(seen))
  await assert.rejects(
    c.subscribe({ a: 0 }, () => {}),
    isInvalid(/weight of queue "a": must be 1 to 1000/),
  )
  // Not wrapped around, truncated or converted: refused as given.
  await assert.rejects(
    c.subscribe({ a: 1, b: -1 }, () => {}),
    isInvalid(/weight of queue "b": must be 1 to 1000, got -1$/),
  )
  await assert.rejects(
    c.subscribe({ a: 1.5 }, () => {}),
    isInvalid(/weight of queue "a": must be a whole number, got 1.5$/),
  )
  await assert.rejects(
    c.subscribe({ a: '5' }, () => {}),
    isInvalid(/weight of queue "a": must be a whole number, got string$/),
  )
  await assert.rejects(
    c.subscribe(['a', 'a'], () => {}),
    isInvalid(/given twice/),
  )
  await assert.rejects(
    c.subscribe([], () => {}),
    isInvalid(/queues/),
  )
  await assert.rejects(
    c.subscribe(['bad name'], () => {}),
    isInvalid(/queue name/),
  )
  await assert.rejects(
    c.subscribe('a', () => {}),
    isInvalid(/queues/),
  )
})

test('history: per minute, per hour and totals; setHistory turns the counting off', async (t) => {
  const c = await connect('history')
  t.after(() => c.close())
  const q = c.queue('q')
  const t0 = new Date()
  await q.publishBatch([{ body: 'a' }, { body: 'b' }, { body: 'c', maxAttempts: 1 }])
  const ms = await q.fetch(3, { waitMs: 1000 })
  for (const m of ms) await (m.text() === 'c' ? m.nack({ reason: 'no' }) : m.ack())
  const total = await q.historyTotals()
  assert.deepEqual(
    [total.published, total.delivered, total.acked, total.retried, total.dead, total.expired],
    [3, 3, 2, 0, 1, 0],
  )
  assert.equal(total.lateness.length, 16)
  assert.equal(
    total.lateness.reduce((a, b) => a + b),
    3,
  )
  assert.equal(typeof total.latenessSumMs, 'number')
  const points = await q.history(t0.getTime() - 60_000, new Date())
  assert.ok(points.length >= 2 && points.every((p) => p.at instanceof Date))
  assert.equal(points[1].at - points[0].at, 60_000)
  assert.equal(
    points.reduce((a, p) => a + p.published, 0),
    3,
  )
  const hours = await q.history(t0, new Date(), 'hour')
  assert.equal(
    hours.reduce((a, p) => a + p.acked, 0),
    2,
  )
  assert.equal(await q.setHistory(false), true)
  await q.publish('uncounted')
  assert.equal((await q.historyTotals()).published, 3)
  assert.equal(await q.setHistory(true), true)
  await assert.rejects(q.history(new Date(), t0.getTime() - 3_600_000), isInvalid(/^until/))
  // By UTC day: each point at a midnight, counting what this test did.
  const days = await q.history(new Date(t0.getTime() - 2 * 86_400_000), new Date(), 'day')
  assert.equal(days.length, 3)
  assert.ok(days.every((p) => p.at.getTime() % 86_400_000 === 0))
  assert.equal(
    days.reduce((n, p) => n + p.published, 0),
    3,
  )
  await assert.rejects(q.history(t0, new Date(), 'week'), isInvalid(/step/))
})

test('upcoming: how many messages fall due per bucket', async (t) => {
  const c = await connect('upcoming')
  t.after(() => c.close())
  const q = c.queue('q')
  const base = Date.now() + 3_600_000
  await q.publishBatch([0, 1, 2, 120_000, 125_000].map((d) => ({ body: 'u', at: base + d })))
  const b = await q.upcoming(new Date(base), 60_000, 4)
  assert.deepEqual(
    b.map((x) => x.count),
    [3, 0, 2, 0],
  )
  assert.ok(b[2].at instanceof Date && b[2].at.getTime() === base + 120_000)
  await assert.rejects(q.upcoming(base, 60_000, 0), isInvalid(/buckets/))
  await assert.rejects(q.upcoming(base, 0, 3), isInvalid(/width/))
})

test('list: a page of one state, with the total', async (t) => {
  const c = await connect('list')
  t.after(() => c.close())
  const q = c.queue('q')
  await q.publishBatch(['r0', 'r1', 'r2'].map((id) => ({ body: id, id })))
  await q.publish('s', { id: 's0', delayMs: 60_000 })
  const page = await q.list('ready', { offset: 1, limit: 1 })
  assert.equal(page.total, 3)
  assert.deepEqual(
    page.items.map((m) => m.id),
    ['r1'],
  )
  const s = await q.list('scheduled')
  assert.deepEqual(
    s.items.map((m) => [m.id, m.state, m.body.toString()]),
    [['s0', 'scheduled', 's']],
  )
  assert.ok(s.items[0].dueAt instanceof Date)
  assert.equal((await q.list('dead')).total, 0)
  await assert.rejects(q.list('ready', { limit: 0 }), isInvalid(/limit/))
  await assert.rejects(q.list('lost'), isInvalid(/state/))
})

test('search: by id prefix, header, body or last error, step by step with a cursor', async (t) => {
  const c = await connect('search')
  t.after(() => c.close())
  const q = c.queue('q')
  const msgs = Array.from({ length: 700 }, (_, i) => ({ body: `order ${i}`, id: `order-${i}`, headers: { t: 'a' } }))
  msgs.push({ body: 'refund 7', id: 'refund-7', headers: { t: 'b' } })
  await q.publishBatch(msgs)
  await q.publish('x', { id: 'bad', maxAttempts: 1 })
  for (const m of await q.fetch(1000)) await (m.id === 'bad' ? m.nack({ reason: 'card declined' }) : m.ack())
  await q.publishBatch(msgs)

  async function all(what) {
    const ids = new Set()
    let cursor = null
    let steps = 0
    do {
      const page = await q.search(what, cursor)
      steps += 1
      assert.equal(typeof page.scanned, 'number')
      for (const m of page.items) ids.add(m.id)
      cursor = page.cursor
    } while (cursor !== null)
    return { ids: [...ids].sort(), steps }
  }
  const byId = await all({ idPrefix: 'order-6' })
  assert.equal(byId.ids.length, 111, 'order-6, order-60..69, order-600..699')
  assert.ok(byId.steps > 1, 'one step is bounded')
  assert.deepEqual((await all({ header: { t: 'b' } })).ids, ['refund-7'])
  assert.deepEqual((await all({ body: 'refund' })).ids, ['refund-7'])
  assert.deepEqual((await all({ body: Buffer.from('der 69') })).ids.length, 11)
  assert.deepEqual((await all({ error: 'declined' })).ids, ['bad'])
  const first = await q.search({ idPrefix: 'bad' })
  assert.equal(first.cursor === null || typeof first.cursor === 'string', true)
  await assert.rejects(q.search({ body: '' }), isInvalid(/search\.body/))
  await assert.rejects(q.search({ idPrefix: 'x' }, 'abc'), isInvalid(/cursor/))
  await assert.rejects(q.search({}), isInvalid(/search/))
  // A header is one { name: value } entry; anything else is refused, not read as something else.
  await assert.rejects(q.search({ header: 'a=b' }), isInvalid(/^search\.header: .* got string$/))
  await assert.rejects(q.search({ header: { a: '1', b: '2' } }), isInvalid(/got 2 entries$/))
  await assert.rejects(q.search({ header: {} }), isInvalid(/got 0 entries$/))
})

test('bulk: cancel, reschedule, deliver now, respawn and purge, by ids or by a search', async (t) => {
  const c = await connect('bulk')
  t.after(() => c.close())
  const q = c.queue('q')
  await q.publishBatch(['a1', 'a2', 'a3', 'b1'].map((id) => ({ body: id, id, delayMs: 600_000 })))
  assert.deepEqual(await q.bulk({ action: 'cancel', ids: ['a1', 'nope'] }), { matched: 2, done: 1, scanned: 0 })
  const at = new Date(Date.now() + 3_600_000)
  const r = await q.bulk({ action: 'reschedule', search: { idPrefix: 'a' }, at })
  assert.deepEqual([r.matched, r.done], [2, 2])
  assert.equal((await q.peek('a2')).dueAt.getTime(), at.getTime())
  assert.equal((await q.bulk({ action: 'deliverNow', ids: ['b1'] })).done, 1)
  assert.equal((await q.peek('b1')).state, 'ready')
  const [m] = await q.fetch(1)
  await m.nack({ reason: 'broken', retryInMs: 600_000 })
  await q.publish('x', { id: 'b2', maxAttempts: 1 })
  await (await q.fetch(1))[0].nack()
  assert.equal((await q.stats()).dead, 1, 'b2 dead, b1 retried')
  assert.equal((await q.bulk({ action: 'respawn', ids: ['b2'] })).done, 1)
  await (await q.fetch(1, { waitMs: 1000 }))[0].nack()
  assert.equal((await q.bulk({ action: 'purge', search: { idPrefix: 'b2' } })).done, 1)
  assert.equal((await q.stats()).dead, 0)
  await assert.rejects(
    q.bulk({ action: 'reschedule', ids: ['a2'] }),
    isInvalid(/^delayMs\/at: reschedule needs a new due time \(`delayMs` or `at`\)$/),
  )
  await assert.rejects(q.bulk({ action: 'cancel' }), isInvalid(/^ids\/search/))
  await assert.rejects(
    q.bulk({ action: 'explode', ids: ['a2'] }),
    isInvalid(/^action: must be one of .*, got 'explode'$/),
  )
})

test('sharded queue: messages spread over shards, one consumer gets them all, counts must agree', async (t) => {
  const c = await connect('shards')
  t.after(() => c.close())
  const q = c.queue('orders', { shards: 4 })
  const ids = []
  for (let i = 0; i < 20; i++) ids.push((await q.publish(`m${i}`, { id: `o-${i}` })).id)
  assert.equal((await q.stats()).total, 20, 'stats sum the shards')
  const seen = new Set()
  const sub = await q.subscribe((m) => void seen.add(m.id))
  await until(() => seen.size === 20)
  await sub.close()
  assert.deepEqual([...seen].sort(), [...ids].sort())
  await until(async () => (await q.stats()).total === 0)
  // By name, a client subscription opens the queue with the count stored in Redis.
  await q.publish('by name')
  const byName = []
  const sub2 = await c.subscribe(['orders'], (m) => void byName.push(m.text()))
  t.after(() => sub2.close())
  await until(() => byName.length === 1)
  assert.throws(() => c.queue('orders', { shards: 0 }), isInvalid(/shards/))
  const other = c.queue('orders', { shards: 8 })
  await assert.rejects(other.stats(), isInvalid(/4 shards/))
  assert.throws(() => c.queue('orders', { shard: 4 }), isInvalid(/shard/))
})
