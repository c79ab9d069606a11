#!/usr/bin/env node
// BullMQ side of the redelay side-by-side benchmark (issue 3). Phases (a)-(e), each on a
// fresh queue name with FLUSHDB before it, against REDIS_URL (a private redis-server: the
// runner bench/run.sh gives one). Settings and the JSON schema: bench/README.md.
//
//   REDIS_URL=redis://127.0.0.1:6379 node bench/bullmq/bench.mjs [--json] [--quick]
//
// Progress goes to stderr; stdout carries only the table, or with --json one JSON object.
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { Queue, Worker } from 'bullmq'
import IORedis from 'ioredis'

const require = createRequire(import.meta.url)
const BULLMQ_VERSION = require('bullmq/package.json').version
const IOREDIS_VERSION = require('ioredis/package.json').version

// ---------------------------------------------------------------------------------------
// Options
const USAGE = `usage: node bench.mjs [--json] [--quick] [options]
  --json                 print one JSON object (schema: bench/README.md) instead of a table
  --quick                seconds-long smoke run with small counts
  --concurrency LIST     Worker concurrencies tried in (b), comma-separated (default 50,100,200)
  --backlog-modes LIST   how the due backlog of (b) is stored: wait (delay 0, BullMQ's fast path)
                         and/or delayed (delay elapsed, promoted by the Worker) (default wait,delayed)
  --single N  --batch N  --batch-size N  --backlog N  --low N  --low-spread-ms N
  --burst N  --burst-due-ms N  --memory N  --seed N   override the counts of each phase`

function parseArgs(argv) {
  const o = {
    json: false,
    quick: false,
    concurrency: [50, 100, 200],
    backlogModes: ['wait', 'delayed'],
    single: 10_000,
    batch: 100_000,
    batchSize: 1_000,
    backlog: 100_000,
    low: 500,
    lowSpreadMs: 5_000,
    burst: 50_000,
    burstDueMs: 3_000,
    memory: 100_000,
    seed: 42,
  }
  const quick = {
    concurrency: [100],
    backlogModes: ['wait'],
    single: 300,
    batch: 5_000,
    backlog: 3_000,
    low: 50,
    lowSpreadMs: 1_000,
    burst: 2_000,
    burstDueMs: 1_000,
    memory: 5_000,
  }
  const explicit = {}
  const num = (v, k) => {
    const n = Number(v)
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${k}: expected a positive number, got ${v}`)
    return Math.floor(n)
  }
  const keys = {
    '--single': 'single',
    '--batch': 'batch',
    '--batch-size': 'batchSize',
    '--backlog': 'backlog',
    '--low': 'low',
    '--low-spread-ms': 'lowSpreadMs',
    '--burst': 'burst',
    '--burst-due-ms': 'burstDueMs',
    '--memory': 'memory',
    '--seed': 'seed',
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`)
      return argv[++i]
    }
    if (a === '--json') o.json = true
    else if (a === '--quick') o.quick = true
    else if (a === '--concurrency')
      explicit.concurrency = next()
        .split(',')
        .map((v) => num(v, a))
    else if (a === '--backlog-modes') {
      explicit.backlogModes = next().split(',')
      for (const m of explicit.backlogModes) {
        if (m !== 'wait' && m !== 'delayed') throw new Error(`--backlog-modes: unknown mode ${m}`)
      }
    } else if (keys[a]) explicit[keys[a]] = num(next(), a)
    else if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE + '\n')
      process.exit(0)
    } else throw new Error(`unknown argument ${a}\n${USAGE}`)
  }
  if (o.quick) Object.assign(o, quick)
  Object.assign(o, explicit)
  return o
}

// ---------------------------------------------------------------------------------------
// Helpers

// Wall-clock milliseconds with sub-millisecond resolution. BullMQ's own notion of time is the
// client's Date.now() (job.timestamp, and the timestamp the Worker passes to its promotion
// scripts), so lateness is measured on that clock; this is Date.now() with the fraction.
const nowMs = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const log = (...a) => process.stderr.write(`bullmq-bench: ${a.join(' ')}\n`)
const round3 = (x) => Math.round(x * 1000) / 1000

// Nearest-rank percentile: the smallest value with at least p% of the values at or below it,
// i.e. sorted[ceil(p/100 * n) - 1]. The redelay side uses the same definition.
function percentile(sorted, p) {
  if (sorted.length === 0) return null
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length))
  return sorted[Math.min(rank, sorted.length) - 1]
}

// Small deterministic PRNG (mulberry32) so the low-load delays are the same in every run.
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function connectionOptions(url) {
  const u = new URL(url)
  const o = {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    // Required by BullMQ for Workers (blocking commands); BullMQ's documented setting.
    maxRetriesPerRequest: null,
  }
  if (u.username) o.username = decodeURIComponent(u.username)
  if (u.password) o.password = decodeURIComponent(u.password)
  const db = u.pathname.replace(/^\//, '')
  if (db) o.db = Number(db)
  if (u.protocol === 'rediss:') o.tls = {}
  return o
}

// A 32-byte message body, the same in every phase (BullMQ stores it JSON-encoded: 34 bytes).
const BODY = 'redelay-bench-body-32-bytes-long'
if (Buffer.byteLength(BODY) !== 32) throw new Error('BODY must be 32 bytes')
const FAR = 3_600_000 // a delay that keeps a job pending for the whole run (1 h)

// ---------------------------------------------------------------------------------------
// The benchmark

class Bench {
  constructor(opts) {
    this.o = opts
    this.url = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
    this.conn = connectionOptions(this.url)
    this.admin = new IORedis({ ...this.conn, lazyConnect: false })
    this.run = `${process.pid}-${Date.now().toString(36)}`
    this.phaseNo = 0
  }

  // A fresh, empty Redis database and a queue name never used before.
  async fresh(phase) {
    await this.admin.flushdb()
    return `bench-${phase}-${this.run}-${++this.phaseNo}`
  }

  queue(name) {
    return new Queue(name, {
      connection: this.conn,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
    })
  }

  // A Worker that is connected and ready but not yet fetching: call worker.run() to start.
  async worker(name, concurrency, processor) {
    const w = new Worker(name, processor, {
      connection: this.conn,
      concurrency,
      autorun: false,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    })
    w.on('error', (e) => log('worker error:', e && e.message))
    await w.waitUntilReady()
    return w
  }

  async redisTimeMs() {
    const [s, us] = await this.admin.time()
    return Number(s) * 1000 + Number(us) / 1000
  }

  // Redis TIME minus this process's clock, from the best of a few round trips. On one host
  // both read the same system clock, so this should be ~0; it is reported, not applied.
  async clockOffsetMs() {
    let best = null
    for (let i = 0; i < 20; i++) {
      const t0 = nowMs()
      const r = await this.redisTimeMs()
      const t1 = nowMs()
      if (!best || t1 - t0 < best.rtt) best = { rtt: t1 - t0, off: r - (t0 + t1) / 2 }
    }
    return best
  }

  async usedMemory() {
    const info = await this.admin.info('memory')
    const m = /used_memory:(\d+)/.exec(info)
    return Number(m[1])
  }

  async addBulk(queue, n, optsFor, onBatch) {
    const size = this.o.batchSize
    for (let i = 0; i < n; i += size) {
      const jobs = []
      for (let j = i; j < Math.min(n, i + size); j++) jobs.push({ name: 'm', data: BODY, opts: optsFor(j) })
      await queue.addBulk(jobs)
      if (onBatch) onBatch(Math.min(n, i + size))
    }
  }

  // Resolves when `n` jobs have completed on `worker`; returns the time of the last one.
  waitCompleted(worker, n, label) {
    return new Promise((resolve, reject) => {
      let done = 0
      let failed = 0
      let last = 0
      let lastLog = nowMs()
      worker.on('completed', () => {
        done++
        last = nowMs()
        if (last - lastLog > 2000) {
          lastLog = last
          log(`  ${label}: ${done}/${n} completed`)
        }
        if (done + failed === n) failed ? reject(new Error(`${failed} jobs failed`)) : resolve(last)
      })
      worker.on('failed', (job, err) => {
        failed++
        log(`job failed: ${err && err.message}`)
        if (done + failed === n) reject(new Error(`${failed} jobs failed`))
      })
    })
  }

  // Seconds of CPU the Redis server has used (INFO cpu: used_cpu_user + used_cpu_sys), so that
  // Redis' work per message is measured whatever else the machine runs.
  async redisCpuS() {
    const info = await this.admin.info('cpu')
    return info
      .split('\n')
      .filter((l) => l.startsWith('used_cpu_user:') || l.startsWith('used_cpu_sys:'))
      .reduce((sum, l) => sum + Number.parseFloat(l.split(':')[1]), 0)
  }

  // µs of Redis CPU per message since `since` (a redisCpuS reading), rounded to 0.01.
  async cpuUsPer(since, n) {
    return Math.round((((await this.redisCpuS()) - since) * 1e6 * 100) / Math.max(n, 1)) / 100
  }

  // (a) publish throughput: one add per call, one call in flight; then addBulk batches.
  async publish() {
    const { single, batch, batchSize } = this.o
    let name = await this.fresh('publish-single')
    let q = this.queue(name)
    await q.waitUntilReady()
    for (let i = 0; i < 100; i++) await q.add('warmup', BODY, { delay: FAR }) // load scripts
    let cpu0 = await this.redisCpuS()
    let t0 = nowMs()
    for (let i = 0; i < single; i++) await q.add('m', BODY, { delay: FAR })
    const singleS = (nowMs() - t0) / 1000
    const singleCpu = await this.cpuUsPer(cpu0, single)
    await q.close()
    log(`(a) single add: ${single} in ${singleS.toFixed(3)} s = ${Math.round(single / singleS)}/s`)

    name = await this.fresh('publish-batch')
    q = this.queue(name)
    await q.waitUntilReady()
    await q.addBulk([{ name: 'warmup', data: BODY, opts: { delay: FAR } }])
    cpu0 = await this.redisCpuS()
    t0 = nowMs()
    await this.addBulk(q, batch, () => ({ delay: FAR }))
    const batchS = (nowMs() - t0) / 1000
    const batchCpu = await this.cpuUsPer(cpu0, batch)
    await q.close()
    log(`(a) addBulk: ${batch} in batches of ${batchSize} in ${batchS.toFixed(3)} s = ${Math.round(batch / batchS)}/s`)
    return {
      publish_single_per_s: Math.round(single / singleS),
      publish_batch_per_s: Math.round(batch / batchS),
      cpu: { publish_single: singleCpu, publish_batch: batchCpu },
      single: { count: single, seconds: round3(singleS) },
      batch: { count: batch, batch_size: batchSize, seconds: round3(batchS) },
    }
  }

  // (b) deliver+ack throughput with a backlog already due, for each backlog mode and
  // concurrency; the figure is the best of them.
  async deliver() {
    const n = this.o.backlog
    const runs = []
    for (const mode of this.o.backlogModes) {
      for (const c of this.o.concurrency) {
        const name = await this.fresh(`deliver-${mode}-${c}`)
        const q = this.queue(name)
        await q.waitUntilReady()
        // wait: delay 0 puts jobs straight on the wait list. delayed: delay 1 ms puts them in the
        // delayed set, due by the time publishing ends; the Worker promotes them as it fetches.
        const delay = mode === 'wait' ? 0 : 1
        await this.addBulk(q, n, () => ({ delay }))
        await sleep(20)
        const counts = await q.getJobCounts('wait', 'delayed')
        const w = await this.worker(name, c, async () => {})
        const done = this.waitCompleted(w, n, `(b) ${mode} c=${c}`)
        const cpu0 = await this.redisCpuS()
        const t0 = nowMs()
        w.run().catch((e) => log('worker run:', e.message))
        const t1 = await done
        const s = (t1 - t0) / 1000
        const cpuUs = await this.cpuUsPer(cpu0, n)
        await w.close()
        await q.close()
        const rate = Math.round(n / s)
        log(
          `(b) backlog ${mode} (${counts.wait} wait, ${counts.delayed} delayed), concurrency ${c}: ${n} in ${s.toFixed(3)} s = ${rate}/s`,
        )
        runs.push({ backlog: mode, concurrency: c, count: n, seconds: round3(s), per_s: rate, redis_cpu_us: cpuUs })
      }
    }
    const best = runs.reduce((a, b) => (b.per_s > a.per_s ? b : a))
    // The concurrency used by (c) and (d): the best one on the delayed path when measured,
    // since that is the path delayed jobs take.
    const delayedRuns = runs.filter((r) => r.backlog === 'delayed')
    const bestDelayed = delayedRuns.length ? delayedRuns.reduce((a, b) => (b.per_s > a.per_s ? b : a)) : best
    return { deliver_ack_per_s: best.per_s, best, best_concurrency: bestDelayed.concurrency, runs }
  }

  // Runs `publishFn` with a Worker (concurrency c) already waiting, records each job's
  // lateness = processing start - (job.timestamp + job.opts.delay), until n are done.
  async lateness(phase, n, c, publishFn) {
    const name = await this.fresh(phase)
    const q = this.queue(name)
    await q.waitUntilReady()
    const lateness = []
    let bad = 0
    const w = await this.worker(name, c, async (job) => {
      const start = nowMs()
      const due = Number(job.timestamp) + Number(job.opts.delay || 0)
      if (!Number.isFinite(due)) bad++
      lateness.push(start - due)
    })
    const done = this.waitCompleted(w, n, phase)
    w.run().catch((e) => log('worker run:', e.message))
    const info = await publishFn(q)
    const last = await done
    await w.close()
    await q.close()
    if (bad) throw new Error(`${phase}: ${bad} jobs without a due time`)
    if (lateness.length !== n) throw new Error(`${phase}: ${lateness.length} processed, expected ${n}`)
    const sorted = lateness.slice().sort((a, b) => a - b)
    const pct = (p) => round3(percentile(sorted, p))
    return {
      last,
      info,
      stats: {
        count: n,
        concurrency: c,
        p50_ms: pct(50),
        p90_ms: pct(90),
        p99_ms: pct(99),
        max_ms: round3(sorted[sorted.length - 1]),
        min_ms: round3(sorted[0]),
        lateness_ms: lateness.map(round3),
      },
    }
  }

  // (c) lateness at low load: n jobs due at random instants 200 ms .. 200 ms + lowSpreadMs
  // after publishing, published in batches (addBulk) while the Worker is already waiting.
  async lowLoad(c) {
    const { low, lowSpreadMs, seed } = this.o
    const rand = rng(seed)
    const delays = Array.from({ length: low }, () => 200 + Math.floor(rand() * lowSpreadMs))
    const r = await this.lateness('low-load', low, c, async (q) => {
      await sleep(100) // the Worker is idle and blocked, as in production
      await this.addBulk(q, low, (i) => ({ delay: delays[i] }))
    })
    const s = r.stats
    log(
      `(c) low load: ${low} jobs over ${lowSpreadMs} ms: p50 ${s.p50_ms} p90 ${s.p90_ms} p99 ${s.p99_ms} max ${s.max_ms} ms`,
    )
    return { ...s, spread_ms: lowSpreadMs, seed }
  }

  // (d) burst: n jobs all due at the same instant, published ahead of it with addBulk.
  async burst(c, batchPerS) {
    const n = this.o.burst
    // Due burstDueMs after the start, or later if publishing n at the measured addBulk rate
    // would not be done by then (so that the burst is not confused with publishing).
    let dueAfter = this.o.burstDueMs
    if (batchPerS) dueAfter = Math.max(dueAfter, Math.ceil((n / batchPerS) * 1000 * 1.5) + 500)
    let due = 0
    let publishedAt = 0
    const r = await this.lateness('burst', n, c, async (q) => {
      const t0 = Date.now()
      due = t0 + dueAfter
      await this.addBulk(
        q,
        n,
        () => {
          const ts = Date.now()
          return { delay: due - ts, timestamp: ts }
        },
        (k) => {
          if (k % 10_000 === 0) log(`  burst: ${k}/${n} published`)
        },
      )
      publishedAt = Date.now()
      if (publishedAt > due) log(`(d) WARNING: publishing ended ${publishedAt - due} ms after the due instant`)
      else log(`  burst: all ${n} published ${due - publishedAt} ms before the due instant`)
    })
    const drainS = (r.last - due) / 1000
    const s = r.stats
    log(`(d) burst: ${n} due at once: drained in ${drainS.toFixed(3)} s after due, p99 lateness ${s.p99_ms} ms`)
    return {
      count: n,
      drain_s: round3(drainS),
      p99_ms: s.p99_ms,
      p50_ms: s.p50_ms,
      p90_ms: s.p90_ms,
      max_ms: s.max_ms,
      min_ms: s.min_ms,
      concurrency: c,
      due_after_ms: dueAfter,
      published_before_due_ms: due - publishedAt,
      lateness_ms: s.lateness_ms,
    }
  }

  // (e) Redis memory per pending (delayed) job with a 32-byte body.
  async memory() {
    const n = this.o.memory
    const name = await this.fresh('memory')
    const q = this.queue(name)
    await q.waitUntilReady()
    // One job first, so that the queue's own keys (meta, id counter, events stream, marker)
    // and the scripts exist before the baseline.
    await q.add('m', BODY, { delay: FAR })
    await sleep(100)
    const before = await this.usedMemory()
    await this.addBulk(q, n, () => ({ delay: FAR }))
    await sleep(100)
    const after = await this.usedMemory()
    const prefix = `bull:${name}`
    const usage = async (k) => Number((await this.admin.memory('USAGE', k, 'SAMPLES', '0')) || 0)
    const breakdown = {
      delayed_zset: await usage(`${prefix}:delayed`),
      events_stream: await usage(`${prefix}:events`),
      one_job_hash: await usage(`${prefix}:2`),
    }
    const dbsize = await this.admin.dbsize()
    await q.close()
    const per = (after - before) / n
    log(`(e) memory: ${n} delayed jobs: used_memory +${after - before} B = ${per.toFixed(1)} B/job`)
    return {
      count: n,
      bytes_per_message: Math.round(per * 10) / 10,
      used_memory_before: before,
      used_memory_after: after,
      keys: dbsize,
      breakdown_bytes: breakdown,
    }
  }

  async all() {
    const o = this.o
    const info = await this.admin.info('server')
    const redisVersion = (/redis_version:(\S+)/.exec(info) || [])[1]
    const clock = await this.clockOffsetMs()
    log(
      `BullMQ ${BULLMQ_VERSION} (ioredis ${IOREDIS_VERSION}) on Redis ${redisVersion} at ${this.url}${o.quick ? ' (quick)' : ''}`,
    )
    const started = new Date().toISOString()
    const a = await this.publish()
    const b = await this.deliver()
    const c = await this.lowLoad(b.best_concurrency)
    const d = await this.burst(b.best_concurrency, a.publish_batch_per_s)
    const e = await this.memory()
    await this.admin.flushdb()
    return {
      system: 'bullmq',
      version: BULLMQ_VERSION,
      quick: o.quick,
      started_at: started,
      publish_single_per_s: a.publish_single_per_s,
      publish_batch_per_s: a.publish_batch_per_s,
      deliver_ack_per_s: b.deliver_ack_per_s,
      redis_cpu_us_per_msg: { ...a.cpu, deliver_ack: b.best.redis_cpu_us },
      low_load: c,
      burst: d,
      memory: e,
      details: {
        publish: { single: a.single, batch: a.batch, delay_ms: FAR },
        deliver: { best: b.best, runs: b.runs },
      },
      settings: {
        bullmq: BULLMQ_VERSION,
        ioredis: IOREDIS_VERSION,
        node: process.version,
        redis: redisVersion,
        connection: { ...this.conn, password: this.conn.password ? '***' : undefined },
        job_options: { removeOnComplete: true, removeOnFail: true },
        worker_options: {
          concurrency_tried: o.concurrency,
          concurrency_used_for_c_d: b.best_concurrency,
          removeOnComplete: { count: 0 },
          other: 'BullMQ defaults (drainDelay 5 s, lockDuration 30 s, stalledInterval 30 s)',
        },
        backlog_modes: o.backlogModes,
        body_bytes: Buffer.byteLength(BODY),
        batch_size: o.batchSize,
        clock: {
          lateness_clock: 'client wall clock (Date.now() with sub-ms fraction); BullMQ schedules on it',
          redis_time_minus_client_ms: round3(clock.off),
          rtt_ms: round3(clock.rtt),
        },
        percentile: 'nearest rank: sorted[ceil(p/100*n)-1]',
      },
    }
  }

  async close() {
    await this.admin.quit()
  }
}

function table(r) {
  const rows = [
    ['(a) publish, single add (msg/s)', r.publish_single_per_s],
    ['(a) publish, addBulk (msg/s)', r.publish_batch_per_s],
    [
      `(b) deliver+ack (msg/s) [${r.details.deliver.best.backlog}, c=${r.details.deliver.best.concurrency}]`,
      r.deliver_ack_per_s,
    ],
    ...r.details.deliver.runs.map((x) => [`    backlog ${x.backlog}, concurrency ${x.concurrency}`, x.per_s]),
    ['(c) low-load lateness p50 (ms)', r.low_load.p50_ms],
    ['(c) low-load lateness p90 (ms)', r.low_load.p90_ms],
    ['(c) low-load lateness p99 (ms)', r.low_load.p99_ms],
    ['(c) low-load lateness max (ms)', r.low_load.max_ms],
    [`(d) burst of ${r.burst.count}: drain (s)`, r.burst.drain_s],
    ['(d) burst lateness p99 (ms)', r.burst.p99_ms],
    [`(e) Redis memory per pending job (B) [${r.memory.count} jobs]`, r.memory.bytes_per_message],
  ]
  const w = Math.max(...rows.map((x) => x[0].length))
  const lines = [`BullMQ ${r.version} on Redis ${r.settings.redis}${r.quick ? ' (quick run)' : ''}`]
  for (const [k, v] of rows) lines.push(`${k.padEnd(w)}  ${String(v).padStart(12)}`)
  return lines.join('\n') + '\n'
}

async function main() {
  let opts
  try {
    opts = parseArgs(process.argv.slice(2))
  } catch (e) {
    process.stderr.write(`${e.message}\n`)
    process.exit(2)
  }
  const bench = new Bench(opts)
  let result
  try {
    result = await bench.all()
  } finally {
    await bench.close().catch(() => {})
  }
  process.stdout.write(opts.json ? JSON.stringify(result) + '\n' : table(result))
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bullmq-bench: error: ${e && e.stack ? e.stack : e}\n`)
    process.exit(1)
  },
)
