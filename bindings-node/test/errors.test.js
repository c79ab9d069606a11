'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { Client, RedelayError, ErrorCodes } = require('..')
const { REDIS_URL, connect, redisCli, privateRedis, closedPort, until, faultProxy, uniquePrefix } = require('./helpers')

function isRedelay(code, pattern) {
  return (e) => {
    assert.ok(e instanceof RedelayError, `a RedelayError, got ${e && e.constructor && e.constructor.name}: ${e}`)
    assert.ok(e instanceof Error)
    assert.equal(e.name, 'RedelayError')
    assert.equal(e.code, code)
    assert.equal(ErrorCodes[e.kind], code)
    assert.ok(!e.message.includes('ERR_REDELAY'), `message without the code: ${e.message}`)
    if (pattern) assert.match(e.message, pattern)
    assert.ok(typeof e.stack === 'string' && e.stack.includes('RedelayError'))
    return true
  }
}

test('ErrorCodes lists the seven kinds', () => {
  assert.deepEqual(ErrorCodes, {
    InvalidArgument: 'ERR_REDELAY_INVALID_ARGUMENT',
    Connection: 'ERR_REDELAY_CONNECTION',
    Timeout: 'ERR_REDELAY_TIMEOUT',
    LeaseLost: 'ERR_REDELAY_LEASE_LOST',
    NotFound: 'ERR_REDELAY_NOT_FOUND',
    Redis: 'ERR_REDELAY_REDIS',
    Handler: 'ERR_REDELAY_HANDLER',
  })
  const e = new RedelayError('ERR_REDELAY_HANDLER', 'handler failed')
  assert.ok(e instanceof Error)
  assert.equal(e.kind, 'Handler')
})

test('ERR_REDELAY_INVALID_ARGUMENT: bad input is refused with the core message', async (t) => {
  const c = await connect('invalid')
  t.after(() => c.close())
  assert.throws(() => c.queue(''), isRedelay('ERR_REDELAY_INVALID_ARGUMENT', /queue name: must be 1 to 128 bytes/))
  assert.throws(() => c.queue('a b'), isRedelay('ERR_REDELAY_INVALID_ARGUMENT', /queue name/))
  assert.throws(() => c.queue(5), isRedelay('ERR_REDELAY_INVALID_ARGUMENT', /^name: must be a string, got number$/))
  const q = c.queue('invalid')
  const bad = [
    [() => q.publish(42), /body: must be a Buffer, Uint8Array or string/],
    [() => q.publish(undefined), /body/],
    [() => q.publish('x', { id: '12345' }), /all digits/],
    [() => q.publish('x', { id: '' }), /id: must be 1 to 256 bytes/],
    [() => q.publish('x', { delayMs: -1 }), /delayMs/],
    [() => q.publish('x', { delayMs: 1e15 }), /delay/],
    [() => q.publish('x', { maxAttempts: 0 }), /^maxAttempts: must be 1 to 1000, got 0$/],
    [() => q.publish('x', { maxAttempts: 1.5 }), /maxAttempts/],
    [() => q.publish('x', { ttrMs: 10 }), /^ttrMs: must be 100 ms to 24 h, got 10 ms$/],
    [() => q.publish('x', { delayMs: 1, at: new Date() }), /^delayMs\/at: give one of them, not both$/],
    [() => q.nack('x', 'tok', { retryInMs: 1e12 }), /^retryInMs: /],
    [() => q.publish('x', { headers: { '': 'v' } }), /header name is empty/],
    [() => q.publish('x', { headers: { k: 1 } }), /headers/],
    [() => q.publish('x', { delayMs: 'soon' }), /delayMs/],
    [() => q.publish('x', { delayMs: NaN }), /^delayMs: must be a finite number, got NaN$/],
    [() => q.fetch(1, { waitMs: Infinity }), /^waitMs: must be a finite number, got Infinity$/],
    [() => Client.connect(5), /^url: must be a string, got number$/],
    [() => q.publish('x', { delay: 5 }), /^delay: unknown field `delay`, expected one of `id`, `delayMs`, `at`/],
    [
      () => q.subscribe(() => {}, { concurency: 5 }),
      /^concurency: unknown field `concurency`, expected one of `concurrency`/,
    ],
    [() => q.publishBatch('nope'), /messages: must be an array/],
    [() => q.publishBatch([null]), /message 0: must be an object with a body/],
    [() => q.publishBatch([{ body: 'a' }, { body: 5 }]), /^message 1: body: must be a Buffer, Uint8Array or string/],
    [() => q.publish('x', 5), /opts: must be a plain object, got number/],
    [() => q.publish('x', new Map([['delayMs', 5]])), /^opts: must be a plain object, got a Map$/],
    [() => q.publish('x', []), /^opts: must be a plain object, got an array$/],
    [
      () => q.publish('x', { headers: new Map([['a', 'b']]) }),
      /^headers: must be a plain object of strings, got a Map$/,
    ],
    [() => q.setHistory(), /^on: must be true or false, got undefined$/],
    // A lone surrogate would be stored as U+FFFD: 'a\uD800' and 'a\uDBFF' would be one id.
    [() => q.publish('x', { id: 'ls\uD800' }), /^id: contains a lone surrogate/],
    [() => q.cancel('ls\uDBFF'), /^id: contains a lone surrogate/],
    [() => q.publish('x', { headers: { k: 'v\uDC00' } }), /^headers\.k: contains a lone surrogate/],
    // A pair in the wrong order is two lone halves.
    [() => q.publish('x', { id: 'ls\uDE00\uD83D' }), /^id: contains a lone surrogate/],
    [() => q.cancel(5), /^id: invalid type: integer `5`, expected a string$/],
    // A call's own arguments are named as its options are (napi's conversion named none).
    [() => q.fetch(NaN), /^max: must be a finite number, got NaN$/],
    [() => c.fetch(['invalid'], Infinity), /^max: must be a finite number, got Infinity$/],
    [() => q.fetch(Symbol('m')), /^max: invalid type: symbol$/],
    [() => q.ack(Symbol('i'), 'tok'), /^id: invalid type: symbol$/],
    [() => q.nack('x', 10n), /^token: invalid type: bigint$/],
    [() => q.extend('x', 'tok', NaN), /^ttrMs: must be a finite number, got NaN$/],
    [() => q.peek(() => 'x'), /^id: invalid type: function$/],
    [() => q.respawn([Symbol('i')]), /^ids\[0\]: invalid type: symbol$/],
    [() => q.purgeDead(NaN), /^oldest: must be a finite number, got NaN$/],
    [() => q.list('dead', { limit: NaN }), /^limit: must be a finite number, got NaN$/],
    [() => q.search({ text: 'a' }, Symbol('c')), /^cursor: invalid type: symbol$/],
    [() => q.publish('x', { ttrMs: Symbol('t') }), /^ttrMs: invalid type: symbol$/],
    [() => q.publishBatch([{ body: 'a' }, { body: 'b', id: Symbol('i') }]), /^message 1: id: invalid type: symbol$/],
    [() => c.subscribe([Symbol('q')], () => {}), /^queues\[0\]: must be a string, got symbol$/],
    [() => q.fetch(0), /max: must be 1 to 1000/],
    [() => q.fetch(1001), /max/],
    [() => q.deadLetters({ limit: 0 }), /limit/],
    [() => q.reschedule('x', 'later'), /when/],
    [() => q.extend('x', 'tok', 1), /ttr/],
    [() => Client.connect('http://localhost'), /url: unknown scheme/],
    [() => Client.connect(REDIS_URL, { prefix: 'bad prefix' }), /prefix/],
    [() => Client.connect(REDIS_URL, { maxBodyBytes: 0 }), /^maxBodyBytes: /],
  ]
  for (const [p, pattern] of bad) await assert.rejects(p(), isRedelay('ERR_REDELAY_INVALID_ARGUMENT', pattern))
  const small = await connect('small', { maxBodyBytes: 10 })
  t.after(() => small.close())
  await assert.rejects(
    small.queue('q').publish(Buffer.alloc(11)),
    isRedelay('ERR_REDELAY_INVALID_ARGUMENT', /body: 11 bytes is more than the limit of 10 bytes/),
  )
  assert.equal((await q.stats()).total, 0, 'nothing was written')
})

test('a surrogate pair is no lone surrogate: an id and a header with an emoji are stored as given', async (t) => {
  const c = await connect('pairs')
  t.after(() => c.close())
  const q = c.queue('pairs')
  const id = 'pair-\uD83D\uDE00'
  assert.equal((await q.publish('x', { id, headers: { k: 'v\uD83D\uDE00' } })).status, 'stored')
  const info = await q.peek(id)
  assert.equal(info.id, id)
  assert.deepEqual(info.headers, { k: 'v\uD83D\uDE00' })
})

test('ERR_REDELAY_CONNECTION: nothing listening, and a closed client', async () => {
  const port = await closedPort()
  await assert.rejects(
    Client.connect(`redis://127.0.0.1:${port}`, { connectTimeoutMs: 500 }),
    isRedelay('ERR_REDELAY_CONNECTION', /cannot connect/),
  )
  const c = await connect('closed')
  await c.close()
  await assert.rejects(c.ping(), isRedelay('ERR_REDELAY_CONNECTION', /client is closed/))
})

test('ERR_REDELAY_TIMEOUT: a Redis that does not answer', async (t) => {
  const redis = await privateRedis()
  t.after(() => redis.close())
  const c = await Client.connect(redis.url, { responseTimeoutMs: 200 })
  t.after(() => c.close())
  await c.ping()
  redis.freeze() // SIGSTOP: the connection stays open, nothing answers
  await assert.rejects(c.queue('q').stats(), isRedelay('ERR_REDELAY_TIMEOUT', /timeout|timed out/i))
})

test('ERR_REDELAY_REDIS: Redis answers with an error', async (t) => {
  const c = await connect('rediserror')
  t.after(() => c.close())
  // A key of the queue that holds the wrong type: the script's HLEN gets WRONGTYPE.
  redisCli('SET', `${c.prefix}:{q}:msg`, 'not a hash')
  await assert.rejects(c.queue('q').stats(), isRedelay('ERR_REDELAY_REDIS', /WRONGTYPE/))
})

test('a subscription keeps its latest error as a RedelayError, and names its queues', async (t) => {
  const c = await connect('sick')
  t.after(() => c.close())
  const q = c.queue('sick')
  const sub = await q.subscribe(() => {}, { concurrency: 1 })
  t.after(() => sub.close())
  assert.deepEqual(sub.queues, ['sick'])
  assert.equal(sub.lastError, null)
  // Spoiled before it is due: a record of an unknown version fails the fetch that meets it.
  await q.publish('x', { id: 'bad', delayMs: 300 })
  redisCli('HSET', `${c.prefix}:{sick}:msg`, 'bad', '\t garbage')
  await until(() => sub.lastError !== null, 15000, 'the error')
  assert.ok(sub.lastError instanceof RedelayError && /bad/.test(sub.lastError.message), String(sub.lastError))
  assert.ok(sub.counters().errors >= 1)
})

test('ERR_REDELAY_LEASE_LOST: settling twice, or with a stale token', async (t) => {
  const c = await connect('leaselost')
  t.after(() => c.close())
  const q = c.queue('leaselost')
  await q.publish('x', { id: 'x' })
  const [m] = await q.fetch(1)
  await assert.rejects(q.ack('x', 'not-the-token'), isRedelay('ERR_REDELAY_LEASE_LOST', /lease lost/))
  await m.ack()
  await assert.rejects(m.ack(), isRedelay('ERR_REDELAY_LEASE_LOST'))
  await assert.rejects(m.nack(), isRedelay('ERR_REDELAY_LEASE_LOST'))
  await assert.rejects(m.extend(1000), isRedelay('ERR_REDELAY_LEASE_LOST'))
})

test('ERR_REDELAY_NOT_FOUND: rescheduling a message that does not exist', async (t) => {
  const c = await connect('notfound')
  t.after(() => c.close())
  await assert.rejects(
    c.queue('nf').reschedule('ghost', { delayMs: 10 }),
    isRedelay('ERR_REDELAY_NOT_FOUND', /no message with id "ghost"/),
  )
  assert.equal(await c.queue('nf').peek('ghost'), null)
})

test('objects are made by the library, not by new', () => {
  const { Queue, Message, Subscription } = require('..')
  for (const C of [Client, Queue, Message, Subscription]) assert.throws(() => new C(), TypeError)
})

test('waitForReplicas: a publish no replica confirms rejects, naming the count', async (t) => {
  // The test Redis has no replicas: WAIT 1 times out; the message is stored on the master.
  const c = await connect('durable', { waitForReplicas: { replicas: 1, timeoutMs: 100 } })
  t.after(() => c.close())
  const q = c.queue('durable')
  const t0 = Date.now()
  await assert.rejects(
    q.publish('x', { id: 'd1' }),
    isRedelay('ERR_REDELAY_REDIS', /only 0 of 1 replicas confirmed within 100 ms/),
  )
  assert.ok(Date.now() - t0 >= 90, 'waited for the timeout')
  await assert.rejects(q.publishBatch([{ body: 'y' }]), isRedelay('ERR_REDELAY_REDIS', /replicas/))
  assert.equal((await q.stats()).total, 2)
  await assert.rejects(
    connect('durable', { waitForReplicas: { replicas: 1, timeoutMs: 120000 } }),
    isRedelay('ERR_REDELAY_INVALID_ARGUMENT', /^waitForReplicas\.timeoutMs: must be 1 ms to 1 min, got 120000 ms$/),
  )
  await assert.rejects(
    connect('durable', { waitForReplicas: { replicas: -1, timeoutMs: 100 } }),
    isRedelay('ERR_REDELAY_INVALID_ARGUMENT', /waitForReplicas.replicas/),
  )
})

test('an option that is an argument of the call, or of another call, is refused', async (t) => {
  const c = await connect('beside')
  t.after(() => c.close())
  const q = c.queue('beside')
  await q.publishBatch([
    { body: 'a', id: 'a' },
    { body: 'b', id: 'b' },
  ])
  const [a, b] = await q.fetch(2, { waitMs: 1000 })
  const bad = isRedelay(ErrorCodes.InvalidArgument)
  await assert.rejects(
    q.nack(a.id, a.token, { id: b.id, token: b.token }),
    (e) => bad(e) && /^id: is an argument of this call/.test(e.message),
  )
  await assert.rejects(q.list('ready', { state: 'leased' }), /^RedelayError: state: is an argument/)
  await assert.rejects(q.fetch(1, { max: 5 }), /max: is an argument/)
  await assert.rejects(c.fetch(['beside'], 1, { max: 5 }), /max: is an argument/)
  await assert.rejects(q.respawn(['x'], { oldest: 3 }), /oldest: is an argument/)
  // A field of another operation: refused by the core, named as JavaScript spells it.
  await assert.rejects(
    a.nack({ delayMs: 600000 }),
    (e) => bad(e) && /^delayMs: unknown field `delayMs`/.test(e.message),
  )
  await assert.rejects(
    q.nack(b.id, b.token, { since: new Date() }),
    (e) => bad(e) && /^since: unknown field/.test(e.message),
  )
  // Nothing above settled a or b by mistake.
  assert.equal((await q.stats()).leased, 2)
  await a.ack()
  await b.ack()
})

test('setLogger takes a function or null, and keeps the logger it had when refused', () => {
  const { setLogger } = require('..')
  assert.throws(
    () => setLogger('console'),
    isRedelay(ErrorCodes.InvalidArgument, /^logger: must be a function or null, got string$/),
  )
  assert.throws(() => setLogger(() => {}, 3), isRedelay(ErrorCodes.InvalidArgument, /^level: must be a level name/))
  setLogger(null)
})

test('many unref subscriptions share one beforeExit listener', async (t) => {
  const c = await connect('unref-many')
  t.after(() => c.close())
  const before = process.listenerCount('beforeExit')
  const subs = []
  for (let i = 0; i < 12; i++) subs.push(await c.queue(`u${i}`).subscribe(() => {}, { unref: true }))
  assert.equal(process.listenerCount('beforeExit'), before + 1)
  for (const s of subs) await s.close()
  assert.equal(process.listenerCount('beforeExit'), before)
})

// Closed by their client's close (not their own), unref'd subscriptions were kept for
// beforeExit, each holding its client's connections, and the listener stayed.
test("a client's close lets go of its unref subscriptions and of the beforeExit listener", async () => {
  const before = process.listenerCount('beforeExit')
  for (let i = 0; i < 3; i++) {
    const c = await connect('unref-client-close')
    await c.queue('q').subscribe(() => {}, { unref: true })
    await c.queue('r').subscribe(() => {}, { unref: true })
    assert.equal(process.listenerCount('beforeExit'), before + 1)
    await c.close()
    assert.equal(process.listenerCount('beforeExit'), before, `client ${i}`)
  }
})

test('a run that fails in the middle says how far it got in soFar', async () => {
  const proxy = await faultProxy()
  const c = await Client.connect(proxy.url, { prefix: uniquePrefix('stopped') })
  try {
    const q = c.queue('q')
    const ids = Array.from({ length: 2500 }, (_, i) => `n${i}`)
    await q.publishBatch(ids.map((id) => ({ body: 'x', id, maxAttempts: 1 })))
    for (let got; (got = await q.fetch(1000)).length > 0;) for (const m of got) await m.nack({ reason: 'boom' })
    assert.equal((await q.stats()).dead, 2500)
    // The error of `run`, whose call holding `cut` never reaches Redis.
    const stopped = async (cut, run) => {
      proxy.dropNextRequestWith(cut)
      const e = await run().then(
        () => assert.fail('the run succeeded'),
        (e) => e,
      )
      isRedelay('ERR_REDELAY_CONNECTION')(e)
      await until(
        () =>
          c.ping().then(
            () => true,
            () => false,
          ),
        10000,
        'the client to reconnect',
      )
      return e
    }
    // n0..n999 respawned, then the second call is cut.
    let e = await stopped('n1500', () => q.respawn(ids))
    assert.deepEqual(e.soFar, { count: 1000 })
    assert.match(e.message, /; stopped: respawned 1000 so far, and that stays done/)
    // The first call finds no dead letter among n0..n999, the second purges n1000..n1999.
    e = await stopped('n2000', () => q.bulk({ action: 'purge', ids }))
    assert.deepEqual(e.soFar, { matched: 2500, done: 1000, scanned: 0 })
    // Failed before any step ended: nothing was done, nothing to say.
    e = await stopped('n0', () => q.purgeDead(ids))
    assert.equal(e.soFar, undefined)
    assert.ok(!('soFar' in e))
    assert.equal(proxy.dropped, 3)
    await assert.rejects(
      q.publish('x', { maxAttempts: 0 }),
      (e) => isRedelay('ERR_REDELAY_INVALID_ARGUMENT')(e) && !('soFar' in e),
    )
    const stats = await q.stats()
    assert.deepEqual([stats.ready, stats.dead], [1000, 500])
  } finally {
    await c.close()
    proxy.close()
  }
})

// bulk's action is taken in its JavaScript spelling only: `deliver_now` was taken silently and
// `DeliverNow` refused as "unknown value `_deliver_now`".
test("bulk's action: only the documented spelling, and the error names every one", async (t) => {
  const c = await connect('bulk-action')
  t.after(() => c.close())
  const q = c.queue('q')
  const all = "'cancel', 'reschedule', 'deliverNow', 'respawn', 'purge'"
  for (const [a, got] of [
    ['deliver_now', "'deliver_now'"],
    ['DeliverNow', "'DeliverNow'"],
    ['Cancel', "'Cancel'"],
    [5, 'number'],
  ])
    await assert.rejects(
      q.bulk({ action: a, ids: ['x'] }),
      isRedelay(ErrorCodes.InvalidArgument, new RegExp(`^action: must be one of ${all}, got ${got}$`)),
    )
  assert.deepEqual(await q.bulk({ action: 'deliverNow', ids: ['x'] }), { matched: 1, done: 0, scanned: 0 })
})

// The native layer makes its errors where no JavaScript runs: their stack showed only the
// message. Rethrown after the await, an async RedelayError shows the calling code.
test('an async RedelayError has the stack of the code that called', async (t) => {
  const c = await connect('stack')
  t.after(() => c.close())
  const q = c.queue('q')
  async function callerOfReschedule() {
    await q.reschedule('nope', 5)
  }
  async function callerOfConnect() {
    await Client.connect('redis://127.0.0.1:1', { connectTimeoutMs: 200 })
  }
  for (const [caller, code] of [
    [callerOfReschedule, ErrorCodes.NotFound],
    [callerOfConnect, ErrorCodes.Connection],
  ]) {
    const e = await caller().then(
      () => assert.fail('resolved'),
      (e) => e,
    )
    isRedelay(code)(e)
    assert.match(e.stack, new RegExp(`^RedelayError: ${e.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`))
    assert.match(e.stack, new RegExp(`at async ${caller.name} \\(${__filename}`), e.stack)
  }
})
