'use strict'
// queue.messages(): the core's message stream as an async iterator.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { connect, until } = require('./helpers')
const { MessageStream, RedelayError } = require('..')

/** Each of `ids` waits, due now, with no attempt counted. */
async function released(q, ids) {
  for (const id of ids) {
    const info = await q.peek(id)
    assert.equal(info.attempts, 0, `${id}: no attempt counted`)
    if (info.state !== 'ready') return false
  }
  return true
}

test('for await hands out messages in order, a batch at a time; break gives back the rest', async (t) => {
  const c = await connect('messages')
  t.after(() => c.close())
  const q = c.queue('stream')
  await q.publishBatch(['s0', 's1', 's2', 's3'].map((id) => ({ body: id, id, ttrMs: 60_000 })))
  const got = []
  for await (const m of q.messages({ batch: 3 })) {
    assert.equal(m.attempt, 1)
    got.push(m)
    if (got.length === 2) break // s2 was fetched with them and not given out: handed back
  }
  assert.deepEqual(
    got.map((m) => m.id),
    ['s0', 's1'],
  )
  assert.ok(await released(q, ['s2']), 'handed back before the loop ended, not leased to nobody for 60 s')
  for (const m of got) await m.ack()

  const stream = q.messages({ batch: 2, waitMs: 200 })
  assert.ok(stream instanceof MessageStream)
  const rest = [(await stream.next()).value, (await stream.next()).value]
  assert.deepEqual(
    rest.map((m) => [m.id, m.attempt]),
    [
      ['s2', 1],
      ['s3', 1],
    ],
  )
  await stream.close()
  assert.deepEqual(await stream.next(), { done: true, value: undefined }, 'closed: it ends')
  for (const m of rest) await m.ack()
})

test('a message published later ends the wait of next()', async (t) => {
  const c = await connect('messages-wait')
  t.after(() => c.close())
  const q = c.queue('stream-wait')
  const stream = q.messages({ waitMs: 100 })
  const next = stream.next()
  await q.publish('later', { id: 'later', delayMs: 300 })
  const { value } = await next
  assert.deepEqual([value.id, value.body.toString()], ['later', 'later'])
  await value.ack()
  await stream.close()
  await until(async () => (await q.stats()).total === 0, 5000, 'the queue empty')
})

test('bad options are refused naming the field and its limit', async (t) => {
  const c = await connect('messages-bad')
  t.after(() => c.close())
  const q = c.queue('stream-bad')
  for (const [opts, words] of [
    [{ batch: 0 }, /^batch: must be 1 to 1000, got 0$/],
    [{ waitMs: 0 }, /^waitMs: must be 10 ms to 3650 days/],
    [{ ttrMs: 50 }, /^ttrMs: must be 100 ms to 24 h/],
  ]) {
    assert.throws(
      () => q.messages(opts),
      (e) => e instanceof RedelayError && e.kind === 'InvalidArgument' && words.test(e.message),
    )
  }
})

test('close from elsewhere ends a loop that waits on an empty queue; await using closes too', async (t) => {
  const c = await connect('messages-close-waiting')
  t.after(() => c.close())
  const q = c.queue('stream-close-waiting')
  const stream = q.messages({ waitMs: 120_000 }) // one fetch would wait two minutes
  const got = []
  const loop = (async () => {
    for await (const m of stream) got.push(m)
  })()
  let ended = false
  loop.then(() => (ended = true))
  await new Promise((r) => setTimeout(r, 300))
  assert.equal(ended, false, 'nothing is due: the loop waits')
  await stream.close() // as a SIGTERM handler would
  await loop
  assert.deepEqual(got, [])
  await q.publish('x', { id: 'after' })
  assert.equal((await q.stats()).leased, 0, 'the closed stream takes nothing')
  assert.equal(typeof Symbol.asyncDispose === 'symbol' ? stream[Symbol.asyncDispose] : stream.close, stream.close)
})
