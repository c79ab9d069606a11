// What the dashboard's browser tests and screenshots share: a `redelay serve` of this checkout on
// 127.0.0.1 over the launcher's Redis (REDIS_URL, from tests/with-redis.sh) with a prefix of its
// own, the native API through fetch, and Debian's Chromium driven by playwright-core.
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

export const ADMIN = 'admin-token-of-the-browser-tests'
const BIN = process.env.REDELAY_BIN || new URL('../../target/debug/redelay', import.meta.url).pathname
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium'
/** Generous: the machine is shared. Tests wait for conditions, never for a time. */
export const WAIT = Number(process.env.BROWSER_WAIT) || 60000

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Starts `redelay serve` with its own prefix over the launcher's Redis (or the one at `url`,
 * such as a cluster's); resolves once /healthz answers. */
export async function startServer(url = process.env.REDIS_URL) {
  if (!url) throw new Error('REDIS_URL: run through tests/browser/run.sh (or tests/with-redis.sh)')
  const prefix = `dash-${process.pid}-${Date.now()}`
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = spawn(BIN, ['--url', url, '--prefix', prefix, 'serve', '--listen', `127.0.0.1:${port}`, '--no-admin'], {
    env: { ...process.env, REDELAY_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  for (let i = 0; ; i++) {
    try {
      const r = await fetch(`${base}/healthz`)
      if (r.ok) break
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`redelay serve exited with ${child.exitCode}`)
    if (i > 600) throw new Error('redelay serve did not answer /healthz')
    await sleep(100)
  }
  const token = (ns, readOnly = false) =>
    execFileSync(BIN, ['--url', url, '--prefix', prefix, 'token', 'create', ns, ...(readOnly ? ['--read-only'] : [])], {
      encoding: 'utf8',
    }).trim()
  const api = async (method, path, body, tok = ADMIN) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${tok}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const data = await r.json().catch(() => null)
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(data)}`)
    return data
  }
  const stop = async () => {
    child.kill('SIGINT')
    await exited
  }
  return { base, prefix, token, api, stop, url }
}

/** A Redis Cluster from tests/cluster.sh (3 masters, each with a replica) that serves the
 * slots it has while others have no node (`cluster-require-full-coverage no`):
 * `{ url, masterOf(key), loseMaster(port), stop() }`. */
export function startCluster() {
  const dir = mkdtempSync(join(tmpdir(), 'redelay-browser-cluster-'))
  const script = new URL('../cluster.sh', import.meta.url).pathname
  const url = execFileSync('bash', [script, 'start', dir], { encoding: 'utf8' }).trim()
  const ports = readFileSync(join(dir, 'ports'), 'utf8').trim().split('\n').map(Number)
  const cli = (port, ...args) => execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).trim()
  for (const p of ports) cli(p, 'CONFIG', 'SET', 'cluster-require-full-coverage', 'no')
  // CLUSTER NODES: id, host:port@bus, flags, master id, …, slot ranges from the 9th field.
  const nodes = (port) =>
    cli(port, 'CLUSTER', 'NODES')
      .split('\n')
      .map((l) => {
        const f = l.split(' ')
        return {
          id: f[0],
          port: Number(f[1].split(':')[1].split('@')[0]),
          flags: f[2].split(','),
          master: f[3],
          slots: f.slice(8),
        }
      })
  const lost = new Set()
  const live = () => ports.find((p) => !lost.has(p))
  const masterOf = (key) => {
    const slot = Number(cli(live(), 'CLUSTER', 'KEYSLOT', key))
    const holds = (range) => {
      const [a, b = a] = range.split('-').map(Number)
      return a <= slot && slot <= b
    }
    return nodes(live()).find((n) => n.flags.includes('master') && n.slots.some(holds)).port
  }
  /** SIGKILLs the master on `port` and its replica (their slots then have no node); resolves
   * once the other nodes mark the master failed. */
  const loseMaster = async (port) => {
    const all = nodes(live())
    const master = all.find((n) => n.port === port)
    const replica = all.find((n) => n.master === master.id)
    for (const p of [port, replica.port]) {
      process.kill(Number(readFileSync(join(dir, String(p), 'redis.pid'), 'utf8')), 'SIGKILL')
      lost.add(p)
    }
    for (
      let i = 0;
      !nodes(live())
        .find((n) => n.port === port)
        .flags.includes('fail');
      i++
    ) {
      if (i > 600) throw new Error(`the cluster never marked ${port} failed`)
      await sleep(100)
    }
  }
  const stop = () => execFileSync('bash', [script, 'stop', dir])
  return { url, masterOf, loseMaster, stop }
}

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu']

/** Debian's Chromium, headless (its own browser downloads cannot work here). */
export async function launch() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
}

/** Debian's Chromium, headless, whose tabs hide and show as in a browser someone uses: `tab()`
 * opens one more tab in its window, in front (the others are hidden: visibilityState "hidden");
 * `page.bringToFront()` shows one again. launch() cannot: Playwright emulates focus on each page
 * it opens (CDP Emulation.setFocusEmulationEnabled), which keeps every page visible. Here the
 * browser is started apart and attached over CDP with `noDefaults`, which leaves its default
 * context without that emulation. Resolves to `{ tab, close }`. */
export async function launchTabs() {
  const dir = mkdtempSync(join(tmpdir(), 'redelay-browser-'))
  // No startup window: with its first tab there, attaching waited on that tab, 0.1 to 5 s
  // here and once a whole minute in CI (connectOverCDP timed out). The first `tab()` opens the
  // window. Its own process group, so that closing ends its helper processes too.
  const child = spawn(
    CHROMIUM,
    [
      ...CHROMIUM_ARGS,
      '--headless',
      '--no-first-run',
      '--no-startup-window',
      `--user-data-dir=${dir}`,
      '--remote-debugging-port=0',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  )
  let log = ''
  child.stderr.on('data', (d) => (log = (log + d).slice(-4000)))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const close = async () => {
    try {
      process.kill(-child.pid, 'SIGKILL')
    } catch {
      // the group is gone already
    }
    if (child.exitCode === null && child.signalCode === null) await exited
    // Helper processes may still write their last files for a moment (ENOTEMPTY).
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 })
  }
  try {
    // Chromium writes its DevTools port and path there once it listens.
    let endpoint
    for (let i = 0; !endpoint; i++) {
      if (child.exitCode !== null) throw new Error(`chromium exited with ${child.exitCode}: ${log}`)
      if (i > 600) throw new Error(`chromium did not open its DevTools port: ${log}`)
      try {
        const [port, path] = readFileSync(join(dir, 'DevToolsActivePort'), 'utf8').trim().split('\n')
        if (path) endpoint = `ws://127.0.0.1:${port}${path}`
      } catch {
        // not written yet
      }
      if (!endpoint) await sleep(100)
    }
    const browser = await chromium.connectOverCDP(endpoint, { noDefaults: true, timeout: WAIT })
    const context = browser.contexts()[0]
    const tab = async () => {
      const page = await context.newPage()
      page.setDefaultTimeout(WAIT)
      return page
    }
    return {
      tab,
      close: async () => {
        await browser.close()
        await close()
      },
    }
  } catch (e) {
    await close()
    throw e
  }
}

/** A page of the dashboard signed in with `token`, at `hash`; `options` for the page (e.g.
 * `timezoneId`), and `setup(page)` run before it loads (e.g. to set its clock). */
export async function openDashboard(browser, srv, token, hash = '#/', { setup, ...options } = {}) {
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 }, ...options })
  page.setDefaultTimeout(WAIT)
  if (setup) await setup(page)
  return signIn(page, srv, token, hash)
}

/** Opens the dashboard at `hash` in `page` and signs in with `token`: `{ page, errors }`, the
 * errors the page logs from then on. */
export async function signIn(page, srv, token, hash = '#/') {
  const errors = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => m.type() === 'error' && !/status of 40[134]/.test(m.text()) && errors.push(m.text()))
  await page.goto(`${srv.base}/${hash}`)
  await page.fill('#token', token)
  await page.click('#signin')
  await page.waitForSelector('#signout:not([hidden])')
  return { page, errors }
}

/** Publishes messages through the native API; `delays` in ms, one message each. */
export async function publish(srv, queue, items) {
  return srv.api('POST', `/v1/queues/${encodeURIComponent(queue)}/messages/batch`, { messages: items })
}

/** Turns `n` messages into dead letters with `reason` (published due now, max_attempts 1). */
export async function makeDead(srv, queue, ids, reason, options = {}) {
  const q = `/v1/queues/${encodeURIComponent(queue)}`
  await publish(
    srv,
    queue,
    ids.map((id) => ({ id, body: JSON.stringify({ id, kind: 'failing' }), max_attempts: 1, ...options })),
  )
  let left = new Set(ids)
  while (left.size) {
    const got = await srv.api('POST', `${q}/fetch`, { max: 100, wait_ms: 5000 })
    for (const d of got.messages) {
      await srv.api('POST', `${q}/messages/${encodeURIComponent(d.id)}/nack`, { token: d.token, reason })
      left.delete(d.id)
    }
  }
}
