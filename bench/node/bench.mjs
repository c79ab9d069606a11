#!/usr/bin/env node
// redelay's Node.js benchmark: publishBatch messages/s and deliver+ack messages/s with an async
// no-op handler, against the Redis at REDIS_URL. Prints one JSON line.
//
//   REDIS_URL=redis://127.0.0.1:6379 node bench/node/bench.mjs
//
// Settings (environment): BENCH_N messages per phase (100000), BENCH_BATCH messages per
// publishBatch call (1000), BENCH_INFLIGHT publishBatch calls in flight (4), BENCH_CONCURRENCY
// handlers at once (256), BENCH_BODY body bytes (64). The package is loaded from
// bindings-node/ of this checkout, or from node_modules when REDELAY_PKG=redelay.
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const require = createRequire(import.meta.url)
const here = path.dirname(fileURLToPath(import.meta.url))
const { Client } = require(process.env.REDELAY_PKG || path.resolve(here, '../../bindings-node'))

const url = process.env.REDIS_URL
if (!url) {
  console.error('REDIS_URL is not set (try: tests/with-redis.sh node bench/node/bench.mjs)')
  process.exit(2)
}
const int = (name, d) => Number.parseInt(process.env[name] ?? `${d}`, 10)
const N = int('BENCH_N', 100_000)
const BATCH = int('BENCH_BATCH', 1000)
const INFLIGHT = int('BENCH_INFLIGHT', 4)
const CONCURRENCY = int('BENCH_CONCURRENCY', 256)
const BODY = Buffer.alloc(int('BENCH_BODY', 64), 'x')

async function publishAll(q, n) {
  const batches = []
  for (let i = 0; i < n; i += BATCH) {
    batches.push(Array.from({ length: Math.min(BATCH, n - i) }, () => ({ body: BODY })))
  }
  const t0 = process.hrtime.bigint()
  let next = 0
  const lane = async () => {
    while (next < batches.length) await q.publishBatch(batches[next++])
  }
  await Promise.all(Array.from({ length: INFLIGHT }, lane))
  return Number(process.hrtime.bigint() - t0) / 1e9
}

async function drain(q, n) {
  const t0 = process.hrtime.bigint()
  const sub = await q.subscribe(async () => {}, { concurrency: CONCURRENCY })
  while (sub.counters().acked < n) await new Promise((r) => setTimeout(r, 2))
  const secs = Number(process.hrtime.bigint() - t0) / 1e9
  const c = sub.counters()
  await sub.close()
  return { secs, counters: c }
}

const client = await Client.connect(url, { prefix: `bench-node-${process.pid}` })
try {
  // Warm-up: a tenth of the work, both phases.
  const warm = client.queue('warmup')
  await publishAll(warm, Math.max(1000, N / 10))
  await drain(warm, Math.max(1000, N / 10))

  const q = client.queue('bench')
  const pubSecs = await publishAll(q, N)
  const stats = await q.stats()
  if (stats.ready + stats.scheduled !== N) throw new Error(`published ${N}, stored ${stats.total}`)
  const { secs: drainSecs, counters } = await drain(q, N)
  const after = await q.stats()
  if (after.total !== 0) throw new Error(`${after.total} messages left after drain`)
  console.log(
    JSON.stringify({
      lang: 'node',
      n: N,
      batch: BATCH,
      concurrency: CONCURRENCY,
      publish_batch_per_s: Math.round(N / pubSecs),
      deliver_ack_per_s: Math.round(N / drainSecs),
      nacked: counters.nacked,
    }),
  )
} finally {
  await client.close()
}
