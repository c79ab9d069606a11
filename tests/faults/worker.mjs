// The Node twin of core/examples/fault_worker.rs: the process the fault suite (tests/faults)
// starts and kills, with the same command line and log lines, consuming through the public API
// of the binding in bindings-node (its package entry point, redelay.js; REDELAY_NODE_MODULE
// overrides the path) with a subscription: the core's batch consumer.
//
//   node worker.mjs publish URL QUEUE COUNT SPREAD_MS     publish m0..m{COUNT-1}, due over SPREAD_MS
//   node worker.mjs consume URL QUEUE LOG CONCURRENCY WORK_MS
//
// The consumer appends to LOG, one unbuffered write per line (so a SIGKILL loses no line that
// was written): `handled ID ATTEMPT PID LEASE_DEADLINE_MS` before it acks, `acked ID ATTEMPT PID`
// after the ack succeeded. Handlers take a random 0..WORK_MS, so kills land inside them.

import { openSync, writeSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'

const modulePath =
  process.env.REDELAY_NODE_MODULE ?? fileURLToPath(new URL('../../bindings-node/redelay.js', import.meta.url))
const mod = await import(pathToFileURL(modulePath).href)
const { Client, RedelayError } = mod.default ?? mod

// Redis may be down while this worker (re)starts: keep trying.
async function retrying(what, call) {
  for (;;) {
    try {
      return await call()
    } catch (e) {
      if (!(e instanceof RedelayError)) throw e
      process.stderr.write(`worker.mjs ${what}: ${e.message}; retrying\n`)
      await sleep(200)
    }
  }
}

async function publish(q, count, spreadMs) {
  for (let i = 0; i < count; ) {
    const n = Math.min(1000, count - i)
    const items = []
    for (let k = i; k < i + n; k++) {
      items.push({
        body: `body ${k}`,
        id: `m${k}`,
        delayMs: Math.floor((k * spreadMs) / Math.max(count, 1)),
        maxAttempts: 1000,
        ttrMs: 2000,
      })
    }
    await retrying('publish', () => q.publishBatch(items))
    i += n
  }
  process.stdout.write(`published ${count}\n`)
}

async function consume(q, logPath, concurrency, workMs) {
  const log = openSync(logPath, 'a')
  const pid = process.pid
  const handle = async (m) => {
    writeSync(log, `handled ${m.id} ${m.attempt} ${pid} ${m.leaseDeadline.getTime()}\n`)
    await sleep(workMs > 0 ? Math.floor(Math.random() * workMs) : 0)
    try {
      await m.ack()
    } catch (e) {
      process.stderr.write(`worker.mjs: ack ${m.id}: ${e.message}\n`)
      return
    }
    writeSync(log, `acked ${m.id} ${m.attempt} ${pid}\n`)
  }
  // The subscription keeps the process alive until it is killed.
  await retrying('subscribe', () => q.subscribe(handle, { concurrency, prefetch: concurrency, ttrMs: 2000 }))
}

const argv = process.argv.slice(2)
if (argv.length < 3 || !['publish', 'consume'].includes(argv[0])) {
  process.stderr.write('usage: worker.mjs publish URL QUEUE COUNT SPREAD_MS | consume URL QUEUE LOG CONCURRENCY WORK_MS\n')
  process.exit(2)
}
const client = await retrying('connect', () => Client.connect(argv[1], { responseTimeoutMs: 2000 }))
const q = client.queue(argv[2])
if (argv[0] === 'publish') {
  await publish(q, Number(argv[3]), Number(argv[4]))
  await client.close()
} else {
  await consume(q, argv[3], Number(argv[4]), Number(argv[5]))
}
