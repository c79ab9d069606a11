// The Node agent of the cross-language interop matrix: the command line of
// core/examples/interop_agent.rs, using only the public API of the binding in bindings-node
// (its package entry point, redelay.js; REDELAY_NODE_MODULE overrides the path).
//
//   node agent.mjs publish URL QUEUES SPEC_JSON_FILE
//   node agent.mjs consume URL QUEUES N OUT_JSON_FILE [--nack REASON | --leave]
//   node agent.mjs admin URL QUEUE pause|resume|search|bulk|stats ARG_JSON
//
// QUEUES is one queue name or several separated by commas. See core/examples/interop_agent.rs.

import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const TIMEOUT_MS = 30_000

const modulePath =
  process.env.REDELAY_NODE_MODULE ?? fileURLToPath(new URL('../../bindings-node/redelay.js', import.meta.url))
const mod = await import(pathToFileURL(modulePath).href)
const { Client } = mod.default ?? mod

function die(msg, code = 1) {
  process.stderr.write(`agent.mjs (node): ${msg}\n`)
  process.exit(code)
}

const queues = (arg) => arg.split(',').filter((q) => q.length > 0)

async function publish(client, queueArg, specFile) {
  const spec = JSON.parse(readFileSync(specFile, 'utf8'))
  const items = spec.map((e) => {
    const item = { body: Buffer.from(e.body_b64, 'base64') }
    if (e.id != null) item.id = e.id
    if (e.headers != null) item.headers = e.headers
    if (e.delay_ms != null) item.delayMs = e.delay_ms
    if (e.max_attempts != null) item.maxAttempts = e.max_attempts
    if (e.ttr_ms != null) item.ttrMs = e.ttr_ms
    if (e.expires_in_ms != null) {
      item.expiresInMs = e.expires_in_ms
      item.dropOnExpiry = Boolean(e.drop_on_expiry)
    }
    return item
  })
  const out = []
  for (const name of queues(queueArg)) {
    const published = await client.queue(name).publishBatch(items)
    for (const p of published) out.push({ queue: name, id: p.id, status: p.status })
  }
  process.stdout.write(JSON.stringify(out) + '\n')
}

async function fetchN(q, n, deadline) {
  const got = []
  while (got.length < n) {
    const left = deadline - Date.now()
    if (left <= 0) break
    try {
      got.push(...(await q.fetch(Math.min(n - got.length, 1000), { waitMs: Math.min(left, 1000) })))
    } catch (e) {
      return { got, err: `fetch from ${q.name}: ${e.message}` }
    }
  }
  return { got, err: null }
}

const record = (m) => ({
  id: m.id,
  queue: m.queue,
  body_b64: m.body.toString('base64'),
  headers: m.headers,
  attempt: m.attempt,
  max_attempts: m.maxAttempts,
  last_error: m.lastError,
  published_at_ms: m.publishedAt.getTime(),
  due_at_ms: m.dueAt.getTime(),
  delivered_at_ms: m.deliveredAt.getTime(),
  lateness_ms: m.latenessMs,
  consumer: 'node',
})

// Without --nack, every queue is consumed the way a Node service does it: a subscription
// whose handler returns (the subscription acks). With --nack the messages are fetched and
// nacked by hand, so that none comes back to this process before it exits; with --leave
// (`leave`) they are fetched and left leased, their leases to lapse after the exit.
async function consume(client, queueArg, n, outFile, nack, leave = false) {
  const qs = queues(queueArg).map((name) => client.queue(name))
  const problems = []
  const all = []
  if (nack == null && !leave) {
    const done = []
    const subs = await Promise.all(
      qs.map((q) => {
        let count = 0
        let finish
        done.push(new Promise((resolve) => (finish = resolve)))
        return q.subscribe(
          (m) => {
            all.push(record(m))
            if (++count === n) finish()
          },
          { concurrency: 64 },
        )
      }),
    )
    process.stdout.write('ready\n')
    const timer = new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS, 'timeout'))
    const outcomes = await Promise.all(done.map((d) => Promise.race([d, timer])))
    await Promise.all(subs.map((s) => s.close()))
    outcomes.forEach((o, i) => {
      const got = all.filter((r) => r.queue === qs[i].name).length
      if (o === 'timeout') problems.push(`${qs[i].name}: ${got} of ${n} messages arrived within ${TIMEOUT_MS} ms`)
      const c = subs[i].counters()
      if (c.acked !== got) problems.push(`${qs[i].name}: ${got} handled but ${c.acked} acked`)
    })
    writeFileSync(outFile, JSON.stringify(all))
  } else {
    process.stdout.write('ready\n')
    const deadline = Date.now() + TIMEOUT_MS
    const results = await Promise.all(qs.map((q) => fetchN(q, n, deadline)))
    const got = []
    results.forEach(({ got: g, err }, i) => {
      if (g.length < n) problems.push(`${qs[i].name}: ${g.length} of ${n} messages arrived within ${TIMEOUT_MS} ms`)
      if (err) problems.push(err)
      got.push(...g)
    })
    writeFileSync(outFile, JSON.stringify(got.map(record)))
    for (const m of leave ? [] : got) {
      try {
        await m.nack({ retryInMs: 0, reason: nack })
      } catch (e) {
        problems.push(`settling ${m.id}: ${e.message}`)
      }
    }
  }
  if (problems.length > 0) {
    await client.close()
    die(problems.join('; '), 3)
  }
}

async function admin(client, name, op, argJson) {
  if (op === 'stats') {
    const out = {}
    for (const each of queues(name)) {
      const s = await client.queue(each).stats()
      out[each] = {
        total: s.total,
        scheduled: s.scheduled,
        ready: s.ready,
        leased: s.leased,
        lapsed: s.lapsed,
        dead: s.dead,
      }
    }
    process.stdout.write(JSON.stringify(out) + '\n')
    return
  }
  const q = client.queue(name)
  const arg = JSON.parse(argJson)
  const header = () => ({ header: { [arg.header[0]]: arg.header[1] } })
  let out
  if (op === 'pause') out = { changed: await q.pause() }
  else if (op === 'resume') out = { changed: await q.resume() }
  else if (op === 'search') {
    const ids = new Set()
    let cursor = null
    do {
      const page = await q.search(header(), cursor)
      for (const m of page.items) ids.add(m.id)
      cursor = page.cursor
    } while (cursor != null)
    out = { ids: [...ids].sort() }
  } else if (op === 'bulk') {
    const action = arg.action.replace(/_(.)/g, (_, c) => c.toUpperCase())
    const r = await q.bulk({ action, search: header() })
    out = { matched: r.matched, done: r.done }
  } else die(`admin: unknown operation ${op}`, 2)
  process.stdout.write(JSON.stringify(out) + '\n')
}

const argv = process.argv.slice(2)
const usage =
  'usage: agent.mjs publish URL QUEUES SPEC | consume URL QUEUES N OUT [--nack REASON | --leave] | admin URL QUEUE OP ARG_JSON'
if (argv.length < 4) die(usage, 2)
const [cmd, url] = argv
const client = await Client.connect(url)
try {
  if (cmd === 'publish' && argv.length === 4) await publish(client, argv[2], argv[3])
  else if (cmd === 'consume' && (argv.length === 5 || (argv.length === 7 && argv[5] === '--nack')))
    await consume(client, argv[2], Number.parseInt(argv[3], 10), argv[4], argv.length === 7 ? argv[6] : null)
  else if (cmd === 'consume' && argv.length === 6 && argv[5] === '--leave')
    await consume(client, argv[2], Number.parseInt(argv[3], 10), argv[4], null, true)
  else if (cmd === 'admin' && argv.length === 5) await admin(client, argv[2], argv[3], argv[4])
  else die(usage, 2)
} catch (e) {
  die(e && e.stack ? e.stack : String(e))
} finally {
  await client.close()
}
