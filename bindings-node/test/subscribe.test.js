'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { connect, until, sleep } = require('./helpers')
const { RetryLater } = require('..')

test('a sync handler acks each message', async (t) => {
  const c = await connect('sync')
  t.after(() => c.close())
  const q = c.queue('sync')
  const seen = []
  const sub = await q.subscribe((m) => {
    seen.push(m.text())
  })
  await q.publishBatch(Array.from({ length: 50 }, (_, i) => ({ body: `n${i}` })))
  await until(async () => (await q.stats()).total === 0, 5000, 'all acked')
  await sub.close()
  assert.equal(seen.length, 50)
  assert.deepEqual(new Set(seen).size, 50)
  const k = sub.counters()
  assert.equal(k.acked, 50)
  assert.equal(k.nacked, 0)
  assert.equal(sub.closed, true)
})

test('an async handler acks when its promise resolves, with concurrency', async (t) => {
  const c = await connect('async')
  t.after(() => c.close())
  const q = c.queue('async')
  let running = 0
  let most = 0
  let done = 0
  const sub = await q.subscribe(
    async (m) => {
      running++
      most = Math.max(most, running)
      await sleep(20)
      assert.equal(m.attempt, 1)
      running--
      done++
    },
    { concurrency: 4 },
  )
  await q.publishBatch(Array.from({ length: 20 }, (_, i) => ({ body: `n${i}` })))
  await until(() => done === 20, 5000, '20 handled')
  await until(async () => (await q.stats()).total === 0, 3000, 'all acked')
  await sub.close()
  assert.ok(most > 1 && most <= 4, `concurrency seen: ${most}`)
})

async function failingHandler(name, handler) {
  const c = await connect(name)
  try {
    const q = c.queue(name)
    const attempts = []
    const sub = await q.subscribe((m) => {
      attempts.push(m.attempt)
      if (m.attempt === 1) return handler(m)
      return undefined
    })
    await q.publish('x', { id: 'fail-me', backoffBaseMs: 1, backoffMaxMs: 1 })
    await until(async () => (await q.stats()).total === 0, 5000, 'retried and acked')
    await sub.close()
    assert.deepEqual(attempts, [1, 2])
    const k = sub.counters()
    assert.equal(k.nacked, 1)
    assert.equal(k.acked, 1)
    assert.deepEqual([k.delivered, k.handled], [2, 2])
    return { q, c }
  } finally {
    await c.close()
  }
}

async function reasonAfterFailure(name, handler) {
  // The reason is kept with the message: look at the second delivery's lastError.
  const c = await connect(name)
  try {
    const q = c.queue(name)
    let reason
    const sub = await q.subscribe((m) => {
      if (m.attempt === 1) return handler(m)
      reason = m.lastError
      return undefined
    })
    await q.publish('x', { backoffBaseMs: 1, backoffMaxMs: 1 })
    await until(() => reason !== undefined, 5000, 'redelivery')
    await sub.close()
    return reason
  } finally {
    await c.close()
  }
}

test('a handler that throws synchronously nacks with "Name: message"', async () => {
  await failingHandler('throw', () => {
    throw new Error('sync boom')
  })
  assert.equal(
    await reasonAfterFailure('throw2', () => {
      throw new Error('sync boom')
    }),
    'Error: sync boom',
  )
  assert.equal(
    await reasonAfterFailure('throw3', () => {
      throw new RangeError('')
    }),
    'RangeError',
    'the name alone when the message is empty',
  )
})

test('an async handler that rejects nacks with "Name: message"', async () => {
  await failingHandler('reject', async () => {
    await sleep(1)
    throw new TypeError('async boom')
  })
  assert.equal(
    await reasonAfterFailure('reject2', async () => {
      throw new TypeError('async boom')
    }),
    'TypeError: async boom',
  )
})

test('a plain function returning a rejected promise nacks too', async () => {
  await failingHandler('rejected', () => Promise.reject(new Error('rejected boom')))
  assert.equal(
    await reasonAfterFailure('rejected2', () => Promise.reject(new Error('rejected boom'))),
    'Error: rejected boom',
  )
})

test('throwing a non-Error value nacks with its string form', async () => {
  assert.equal(
    await reasonAfterFailure('nonerror', () => {
      throw 'just a string'
    }),
    'just a string',
  )
  assert.equal(await reasonAfterFailure('nonerror2', () => Promise.reject(42)), '42')
})

test('RetryLater chooses the retry delay', async (t) => {
  const c = await connect('retrylater')
  t.after(() => c.close())
  const q = c.queue('retrylater')
  const times = []
  const sub = await q.subscribe((m) => {
    times.push(Date.now())
    if (m.attempt === 1) throw new RetryLater('busy', 400)
  })
  await q.publish('x', { backoffBaseMs: 1, backoffMaxMs: 1 })
  await until(() => times.length === 2, 5000, 'retry')
  await sub.close()
  assert.ok(times[1] - times[0] >= 350, `retried after ${times[1] - times[0]} ms`)
})

test('RetryLater takes the delay nack takes, by the core rule: a negative one is refused', async (t) => {
  const c = await connect('retryrule')
  t.after(() => c.close())
  const q = c.queue('retryrule')
  await q.publish('x', { id: 'm' })
  const [m] = await q.fetch(1, { waitMs: 5000 })
  const refused = (ms) => ({
    code: 'ERR_REDELAY_INVALID_ARGUMENT',
    message: `retryInMs: must be 0 to 3650 days, got ${ms} ms`,
  })
  for (const ms of [-5, -0.5, 315360000001]) {
    assert.throws(() => new RetryLater('later', ms), refused(ms))
    await assert.rejects(m.nack({ retryInMs: ms }), refused(ms))
    await assert.rejects(q.nack(m.id, m.token, { retryInMs: ms }), refused(ms))
  }
  assert.equal(m.settled, false) // refused before anything was sent
  assert.equal(new RetryLater('now', 0).retryInMs, 0)
  assert.equal(await m.nack({ retryInMs: 0 }), false)
})

test('RetryLater with a negative delay is a failure naming it, retried after the backoff', async (t) => {
  const c = await connect('retrynegative')
  t.after(() => c.close())
  const q = c.queue('retrynegative')
  const seen = []
  const sub = await q.subscribe((m) => {
    seen.push([m.attempt, m.lastError])
    if (m.attempt === 1) throw new RetryLater('deadline passed', -5)
  })
  await q.publish('x', { backoffBaseMs: 50, backoffMaxMs: 50 })
  await until(() => seen.length === 2, 10_000, 'retried')
  await sub.close()
  assert.deepEqual(seen, [
    [1, null],
    [2, 'RedelayError: retryInMs: must be 0 to 3650 days, got -5 ms'],
  ])
})

// Only a RetryLater chooses the delay: another error with a numeric `retryInMs` field (a
// user's HttpError) is an ordinary failure, worded "Name: message", retried after the backoff.
// A RetryLater of another copy of the package (or another realm) carries the same brand.
test('only a RetryLater, of any copy of the package, chooses the retry delay', async (t) => {
  const c = await connect('retrybrand')
  t.after(() => c.close())
  const q = c.queue('q')
  class HttpError extends Error {
    constructor(message, retryInMs) {
      super(message)
      this.name = 'HttpError'
      this.retryInMs = retryInMs
    }
  }
  // What a RetryLater of another copy looks like: its own class, the shared brand.
  class OtherRetryLater extends Error {
    constructor(message, retryInMs) {
      super(message)
      this.retryInMs = retryInMs
    }
  }
  OtherRetryLater.prototype[Symbol.for('redelay.RetryLater')] = true
  const sub = await q.subscribe((m) => {
    if (m.attempt > 1) return
    throw m.id === 'http' ? new HttpError('503', -5) : new OtherRetryLater('later', 3_600_000)
  })
  const hour = 3_600_000
  await q.publish('x', { id: 'http', backoffBaseMs: hour, backoffMaxMs: hour })
  await q.publish('x', { id: 'other', backoffBaseMs: 1, backoffMaxMs: 1 })
  await until(async () => (await q.stats()).scheduled === 2, 5000, 'both nacked')
  await sub.close()
  const http = await q.peek('http')
  assert.deepEqual([http.attempts, http.lastError], [1, 'HttpError: 503'])
  assert.ok(http.dueAt - http.publishedAt > hour / 2, 'after its backoff, not at once')
  const other = await q.peek('other')
  assert.deepEqual([other.attempts, other.lastError], [1, 'later'])
  assert.ok(other.dueAt - other.publishedAt > hour / 2, 'after its own delay, not the backoff')
})

test('the handler may settle the message itself', async (t) => {
  const c = await connect('manual')
  t.after(() => c.close())
  const q = c.queue('manual')
  let second
  const sub = await q.subscribe(async (m) => {
    if (m.attempt === 1) {
      await m.nack({ retryInMs: 0, reason: 'manual nack' })
      return // returning normally after a nack does not ack
    }
    second = m
    await m.ack()
    await assert.rejects(m.ack(), { code: 'ERR_REDELAY_LEASE_LOST' })
  })
  await q.publish('x')
  await until(() => second !== undefined, 5000, 'second delivery')
  await until(async () => (await q.stats()).total === 0, 3000, 'acked')
  await sub.close()
  assert.equal(second.lastError, 'manual nack')
  assert.equal(second.settled, true)
})

test('many failing handlers never crash the process; the messages end as dead letters', async (t) => {
  const c = await connect('crashproof')
  t.after(() => c.close())
  const q = c.queue('crashproof')
  const sub = await q.subscribe(
    (m) => {
      switch (Number(m.text()) % 3) {
        case 0:
          throw new Error(`t${m.text()}`)
        case 1:
          return Promise.reject(new Error(`r${m.text()}`))
        default:
          return (async () => {
            throw new Error(`a${m.text()}`)
          })()
      }
    },
    { concurrency: 8 },
  )
  await q.publishBatch(Array.from({ length: 30 }, (_, i) => ({ body: String(i), maxAttempts: 1 })))
  await until(async () => (await q.stats()).dead === 30, 5000, '30 dead letters')
  await sub.close()
  const dead = await q.deadLetters({ limit: 100 })
  for (const d of dead) {
    const n = Number(d.body.toString())
    assert.equal(d.lastError, `Error: ${['t', 'r', 'a'][n % 3]}${n}`)
  }
})

test('subscribe refuses a non-function handler and bad options', async (t) => {
  const c = await connect('subbad')
  t.after(() => c.close())
  const q = c.queue('subbad')
  await assert.rejects(q.subscribe('nope'), { code: 'ERR_REDELAY_INVALID_ARGUMENT' })
  await assert.rejects(
    q.subscribe(() => {}, { concurrency: 0 }),
    /concurrency/,
  )
  await assert.rejects(
    q.subscribe(() => {}, { ttrMs: 1 }),
    /ttr/,
  )
  // Not read as false: a string is refused, naming the option.
  await assert.rejects(
    q.subscribe(() => {}, { unref: 'yes' }),
    {
      code: 'ERR_REDELAY_INVALID_ARGUMENT',
      message: 'unref: must be a boolean, got string',
    },
  )
})

test('client.close() closes its subscriptions and refuses later calls', async () => {
  const c = await connect('clientclose')
  const q = c.queue('clientclose')
  const sub = await q.subscribe(() => {})
  await c.close()
  assert.equal(sub.closed, true)
  assert.equal(c.closed, true)
  await assert.rejects(q.publish('x'), { code: 'ERR_REDELAY_CONNECTION', message: 'client is closed' })
  assert.throws(() => c.queue('other'), { code: 'ERR_REDELAY_CONNECTION' })
  await sub.close() // still a no-op
})

test('Symbol.asyncDispose (await using) closes a subscription and a client', async () => {
  const c = await connect('dispose')
  const sub = await c.queue('dispose').subscribe(() => {})
  await sub[Symbol.asyncDispose]()
  assert.equal(sub.closed, true)
  assert.equal(c.closed, false)
  await c[Symbol.asyncDispose]()
  assert.equal(c.closed, true)
})

test('a handler that runs longer than its lease keeps it (no redelivery)', async (t) => {
  const c = await connect('longrun')
  t.after(() => c.close())
  const q = c.queue('longrun')
  const attempts = []
  const sub = await q.subscribe(
    async (m) => {
      attempts.push(m.attempt)
      await sleep(900)
    },
    { ttrMs: 300 },
  )
  await q.publish('slow')
  await until(async () => (await q.stats()).total === 0, 5000, 'acked')
  await sub.close()
  assert.deepEqual(attempts, [1])
  assert.equal(sub.counters().leaseLost, 0)
})

test('a batch of mixed bodies and headers reaches the handler byte for byte', async (t) => {
  const c = await connect('batchbodies')
  t.after(() => c.close())
  const q = c.queue('batchbodies')
  const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
  const big = Buffer.alloc(1024 * 1024)
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff
  const cases = [
    { id: 'empty-first', body: Buffer.alloc(0) },
    { id: 'text', body: Buffer.from('héllo ✓'), headers: { lang: 'fr', 'x-trace': 'ü' } },
    { id: 'empty-middle', body: Buffer.alloc(0) },
    { id: 'binary', body: binary },
    { id: 'mib', body: big, headers: { size: 'big' } },
    { id: 'last', body: Buffer.from('z') },
  ]
  // Published before subscribing, so that they arrive together in one batch.
  await q.publishBatch(cases.map(({ id, body, headers }) => ({ id, body, headers })))
  const got = new Map()
  const sub = await q.subscribe(
    (m) => {
      got.set(m.id, m)
    },
    { concurrency: 10 },
  )
  await until(() => got.size === cases.length, 5000, 'all delivered')
  await until(async () => (await q.stats()).total === 0, 3000, 'all acked')
  await sub.close()
  for (const { id, body, headers } of cases) {
    const m = got.get(id)
    assert.ok(Buffer.isBuffer(m.body), `${id}: a Buffer`)
    assert.ok(m.body.equals(body), `${id}: bytes (${m.body.length} of ${body.length})`)
    assert.deepEqual(m.headers, headers ?? {}, `${id}: headers`)
    assert.equal(m.queue, 'batchbodies')
    assert.equal(m.attempt, 1)
    assert.equal(m.lastError, null)
    assert.ok(m.dueAt instanceof Date && m.deliveredAt >= m.dueAt, `${id}: dates`)
    assert.match(m.token, /^[0-9a-f]{16}$/)
  }
  assert.equal(got.get('text').text(), 'héllo ✓')
})

test('after its handler finished, a message reports settled and refuses ack', async (t) => {
  const c = await connect('afterwards')
  t.after(() => c.close())
  const q = c.queue('afterwards')
  let kept
  const sub = await q.subscribe(async (m) => {
    assert.equal(m.settled, false, 'not settled while the handler runs')
    assert.ok(m.leaseDeadline.getTime() > Date.now(), 'the lease runs into the future')
    kept = m
  })
  await q.publish('x', { id: 'x' })
  await until(async () => kept !== undefined && (await q.stats()).total === 0, 5000, 'handled and acked')
  await sub.close()
  assert.equal(kept.settled, true)
  assert.ok(kept.leaseDeadline instanceof Date)
  await assert.rejects(kept.ack(), { code: 'ERR_REDELAY_LEASE_LOST', message: /x/ })
  await assert.rejects(kept.extend(5000), { code: 'ERR_REDELAY_LEASE_LOST' })
})

test('a message first touched after its handler finished refuses ack too', async (t) => {
  const c = await connect('untouched')
  t.after(() => c.close())
  const q = c.queue('untouched')
  let kept
  const sub = await q.subscribe((m) => {
    kept = m
  })
  await q.publish('y', { id: 'y' })
  await until(async () => kept !== undefined && (await q.stats()).total === 0, 5000, 'handled and acked')
  await sub.close()
  assert.equal(kept.settled, true)
  await assert.rejects(kept.ack(), {
    code: 'ERR_REDELAY_LEASE_LOST',
    message: /y: already settled by its subscription/,
  })
  await assert.rejects(kept.nack(), { code: 'ERR_REDELAY_LEASE_LOST' })
})

test('a handler still running after the drain timeout can still ack its message itself', async (t) => {
  const c = await connect('lateack')
  t.after(() => c.close())
  const q = c.queue('lateack')
  await q.publish('x', { id: 'late' })
  let release
  const gate = new Promise((r) => (release = r))
  let late = 'none'
  let started = false
  const sub = await q.subscribe(
    async (msg) => {
      started = true
      await gate // msg untouched until after the close gave up on it
      try {
        await msg.ack()
        late = 'acked'
      } catch (e) {
        late = e.code
      }
    },
    { concurrency: 1, drainTimeoutMs: 50, ttrMs: 30000 },
  )
  // The handler itself, not the lease: a close between the lease and the JS thread taking the
  // delivery gives it back unstarted (no attempt counted), and the handler never runs.
  await until(() => started, 5000, 'the handler running')
  await sub.close() // returns at the drain timeout; the handler still runs
  release()
  await until(() => late !== 'none', 5000, 'the late ack')
  // Its lease still held: the ack went through (as in Python and Rust), not LeaseLost.
  assert.equal(late, 'acked')
  assert.equal(await q.peek('late'), null)
})

test('thousands of messages over many batches: each handled once, within the concurrency', async (t) => {
  const c = await connect('many')
  t.after(() => c.close())
  const q = c.queue('many')
  const n = 3000
  for (let i = 0; i < n; i += 1000) {
    await q.publishBatch(Array.from({ length: 1000 }, (_, k) => ({ body: `m${i + k}`, id: `m${i + k}` })))
  }
  const seen = new Map()
  let running = 0
  let most = 0
  const sub = await q.subscribe(
    async (m) => {
      running++
      most = Math.max(most, running)
      seen.set(m.id, (seen.get(m.id) ?? 0) + 1)
      if (Number(m.id.slice(1)) % 7 === 0) await sleep(1)
      running--
      if (Number(m.id.slice(1)) % 100 === 0 && m.attempt === 1) throw new RetryLater('later', 0)
    },
    { concurrency: 32 },
  )
  await until(async () => (await q.stats()).total === 0, 30000, 'all acked')
  await sub.close()
  assert.equal(seen.size, n)
  for (const [id, times] of seen) assert.equal(times, Number(id.slice(1)) % 100 === 0 ? 2 : 1, id)
  assert.ok(most <= 32, `at most 32 at once, saw ${most}`)
  const k = sub.counters()
  assert.equal(k.acked, n)
  assert.equal(k.nacked, n / 100)
  assert.equal((await q.verify()).ok, true)
})

test('a settle the handler did not await is not overtaken by the handler outcome', async (t) => {
  const c = await connect('noawait')
  t.after(() => c.close())
  const q = c.queue('noawait')
  const refused = []
  let handled = 0
  const sub = await q.subscribe(
    (m) => {
      handled++
      const settle = Number(m.id.slice(1)) % 2 ? m.nack({ retryInMs: 600000, reason: 'later' }) : m.release()
      settle.catch((e) => refused.push(e.code))
    },
    { concurrency: 8 },
  )
  await q.publishBatch(Array.from({ length: 40 }, (_, i) => ({ body: 'x', id: `m${i}` })))
  // Released ones come back at once and are released again: wait for the nacked half.
  await until(async () => (await q.stats()).scheduled === 20, 10000, 'the 20 nacks applied')
  await sub.close()
  assert.deepEqual(refused, [])
  const st = await q.stats()
  assert.equal(st.total, 40, 'nothing was acked instead')
  assert.ok(handled >= 40)
})
