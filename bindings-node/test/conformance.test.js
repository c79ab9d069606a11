'use strict'
// The conformance table (tests/conformance/cases.json) through the JS API: every case, each bad
// input with the error kind it must raise (and words of its message), and the plain answers. An
// operation this binding lacks fails the run.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { Client, RedelayError } = require('..')
const { REDIS_URL, connect } = require('./helpers')

const table = require(path.resolve(__dirname, '../../tests/conformance/cases.json'))

// snake_case arguments as this API's option names: `ttr_ms` -> `ttrMs`, `at_ms` -> `at`.
const camel = (k) => (k === 'at_ms' ? 'at' : k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()))
// The table's words name fields the core's way; this API names them in camelCase, durations
// with their unit (`ttr` is `ttrMs`, which errors.test.js checks letter for letter).
const spelled = (w) => w.replace(/[a-z]+(_[a-z]+)+/g, camel)
const withoutUnits = (m) => m.replace(/Ms\b/g, '')
const options = (args, skip = []) =>
  Object.fromEntries(
    Object.entries(args)
      .filter(([k]) => !skip.includes(k))
      .map(([k, v]) => [camel(k), v]),
  )
const select = (a) => a.ids ?? a.oldest ?? 'all'
// A search in the wire form as this API takes it: `{ id_prefix }` is `{ idPrefix }`, `{ header: [k, v] }` is `{ header: { k: v } }`.
const searchFor = (s) => (s.header ? { header: Object.fromEntries([s.header]) } : options(s))

const ops = {
  async connect(a) {
    const c = await Client.connect(a.url.replace('$REDIS_URL', REDIS_URL), {
      prefix: `conf-${process.pid}`,
      ...options(a, ['url']),
    })
    await c.close()
    return null
  },
  queue: (a, q, c) => (c.queue(a.name, { shards: a.shards ?? 1 }), null),
  publish: async (a, q) => (await q.publish(a.body, options(a, ['body']))).status,
  publish_batch: async (a, q) =>
    (await q.publishBatch(a.messages.map((m) => ({ body: m.body, ...options(m, ['body']) })))).map((p) => p.status),
  fetch: async (a, q) => (await q.fetch(a.max, options(a, ['max']))).length,
  async messages(a, q) {
    // The stream first (its options are checked before anything is published), then the
    // message it is to hand out.
    const stream = q.messages(options(a, ['body']))
    await q.publish(a.body)
    const { value } = await stream.next()
    await value.ack()
    await stream.close()
    return value.body.toString()
  },
  fetch_first: async (a, q, c) => (await c.fetch(a.queues, a.max, options(a, ['queues', 'max']))).length,
  ack: (a, q) => q.ack(a.id, a.token).then(() => null),
  nack: (a, q) => q.nack(a.id, a.token, options(a, ['id', 'token'])),
  release: (a, q) => q.release(a.id, a.token).then(() => null),
  extend: (a, q) => q.extend(a.id, a.token, a.ttr_ms).then(() => null),
  cancel: (a, q) => q.cancel(a.id),
  reschedule: async (a, q) => (await q.reschedule(a.id, options(a, ['id']))).getTime(),
  peek: (a, q) => q.peek(a.id),
  stats: (a, q) => q.stats(),
  verify: async (a, q) => ({ problems: (await q.verify()).problems.length }),
  dead_letters: async (a, q) => (await q.deadLetters(options(a))).length,
  respawn: (a, q) => q.respawn(select(a), options(a, ['ids', 'oldest', 'all'])),
  purge_dead: (a, q) => q.purgeDead(select(a)),
  async subscribe(a, q) {
    const sub = await q.subscribe(() => {}, options(a))
    await sub.close()
    return 'subscribed'
  },
  destroy: (a, q) => q.destroy().then(() => null),
  async subscribe_many(a, q, c) {
    const queues = a.weights ? Object.fromEntries(a.queues.map((n, i) => [n, a.weights[i]])) : a.queues
    const sub = await c.subscribe(queues, () => {}, options(a, ['queues', 'weights']))
    await sub.close()
    return 'subscribed'
  },
  pause: (a, q) => q.pause(),
  resume: (a, q) => q.resume(),
  set_history: (a, q) => q.setHistory(a.on),
  history: async (a, q) => (await q.history(a.since_ms, a.until_ms, a.step)).length,
  upcoming: async (a, q) => (await q.upcoming(a.from_ms, a.width_ms, a.buckets)).length,
  async list(a, q) {
    const page = await q.list(a.state, options(a, ['state']))
    return { total: page.total, items: page.items.length }
  },
  async search(a, q) {
    const page = await q.search(searchFor(a.search), a.cursor)
    return { items: page.items.length, done: page.cursor === null }
  },
  async bulk(a, q) {
    const o = options(a, ['action', 'search'])
    return q.bulk({ ...o, action: camel(a.action), ...(a.search && { search: searchFor(a.search) }) })
  },
}

test('every operation of the table is in the JS API', () => {
  assert.deepEqual(
    table.operations.filter((op) => !(op in ops)),
    [],
  )
})

test('every case of the conformance table', async (t) => {
  const c = await connect('conformance')
  t.after(() => c.close())
  let fresh = 0
  for (const [i, k] of table.cases.entries()) {
    const what = `case ${i} (${k.op} ${JSON.stringify(k.args)})`
    const run = ops[k.op]
    assert.ok(run, `${what}: no such operation in the Node binding`)
    const q = c.queue(k.queue ?? `fresh-${(fresh += 1)}`)
    let got, err
    try {
      got = await run(k.args, q, c)
    } catch (e) {
      err = e
    }
    if (k.expect.error !== undefined) {
      assert.ok(err instanceof RedelayError, `${what}: expected ${k.expect.error}, got ${err ?? JSON.stringify(got)}`)
      assert.equal(err.kind, k.expect.error, `${what}: ${err.message}`)
      for (const w of k.expect.message)
        assert.ok(withoutUnits(err.message).includes(spelled(w)), `${what}: "${err.message}" lacks "${spelled(w)}"`)
    } else {
      assert.equal(err, undefined, `${what}: ${err}`)
      const want = k.expect.result
      if (want !== null && typeof want === 'object' && !Array.isArray(want)) {
        for (const [f, v] of Object.entries(want)) assert.deepEqual(got[f], v, `${what}: ${f}`)
      } else {
        assert.deepEqual(got, want, what)
      }
    }
  }
})

// The table's result fields (snake_case, no units) as this API spells them: camelCase, and a
// duration with its unit by design, as in its options (`ttrMs`, `retryInMs`): these are the
// fields whose name gains `Ms`. `history_point.lateness` stays: it is a histogram of counts.
const withUnit = {
  message_info: { ttr: 'ttrMs' },
  history_point: { lateness_sum: 'latenessSumMs' },
  delivery: { lateness: 'latenessMs' },
}
const jsField = (kind, f) => withUnit[kind]?.[f] ?? camel(f)
// The table's fields `value` lacks; `in`, not Object.keys: Message's getters (`settled`,
// `leaseDeadline`) are on its prototype.
const lacking = (kind, value) => table.results[kind].map((f) => jsField(kind, f)).filter((f) => !(f in Object(value)))

test('every value the API returns has every field of the table', async (t) => {
  const c = await connect('fields')
  t.after(() => c.close())
  const q = c.queue('fields')
  const published = await q.publish('x', { id: 'a', expiresInMs: 600000 })
  const info = await q.peek('a')
  assert.ok(info, 'peek: the message just published is missing')
  // A subscription of another queue, so that it does not take the message fetched below.
  const sub = await c.queue('fields-sub').subscribe(() => {})
  await sub.close()
  const [delivery] = await q.fetch(1)
  assert.ok(delivery, 'fetch: the message just published was not delivered')
  const got = {
    published,
    stats: await q.stats(),
    message_info: info,
    verify_report: await q.verify(),
    history_point: await q.historyTotals(),
    list_page: await q.list('leased'),
    search_page: await q.search({ idPrefix: 'a' }),
    bulk_report: await q.bulk({ action: 'cancel', ids: ['none'] }),
    counters: sub.counters(),
    delivery,
  }
  assert.deepEqual(
    Object.keys(got).sort(),
    Object.keys(table.results)
      .filter((k) => k !== 'about')
      .sort(),
    'the kinds of value of the table',
  )
  // Every kind's missing fields at once, by kind: `{ delivery: ['latenessMs'] }`.
  const missing = Object.fromEntries(
    Object.entries(got)
      .map(([kind, value]) => [kind, lacking(kind, value)])
      .filter(([, fields]) => fields.length > 0),
  )
  assert.deepEqual(missing, {}, `fields of the table the Node values lack, by kind: ${JSON.stringify(missing)}`)
  // A value-level check too: the delivery carries the stored message's expiry.
  assert.ok(info.expiresAt instanceof Date, `message_info.expiresAt: ${info.expiresAt}`)
  assert.ok(delivery.expiresAt instanceof Date, `delivery.expiresAt: ${delivery.expiresAt}`)
  assert.equal(delivery.expiresAt.getTime(), info.expiresAt.getTime(), 'delivery.expiresAt and message_info.expiresAt')
  await delivery.ack()
})
