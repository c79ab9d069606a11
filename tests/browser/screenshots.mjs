// Screenshots of the dashboard for the docs: docs/dashboard-overview.png, docs/dashboard-queue.png
// and docs/dashboard-message.png, from a `redelay serve` over the launcher's Redis filled with a
// few queues of demo data. Run through tests/browser/run.sh --screenshots.
/* global document */
import { fileURLToPath } from 'node:url'
import { ADMIN, launch, makeDead, openDashboard, publish, startServer, WAIT } from './lib.mjs'

const docs = fileURLToPath(new URL('../../docs/', import.meta.url))
const MIN = 60000

/** A deterministic spread of due times: more soon, fewer later. */
function spread(n, horizonMs, seed) {
  let x = seed
  const out = []
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648
    const f = x / 2147483648
    out.push(Math.round(MIN + f * f * horizonMs))
  }
  return out
}

async function consume(srv, queue, n, fail = () => null) {
  const q = `/v1/queues/${encodeURIComponent(queue)}`
  let done = 0
  while (done < n) {
    const got = await srv.api('POST', `${q}/fetch`, { max: 100, wait_ms: 2000 })
    if (!got.messages.length) break
    for (const d of got.messages) {
      const reason = fail(d)
      if (reason) await srv.api('POST', `${q}/messages/${d.id}/nack`, { token: d.token, reason, delay_ms: 600000 })
      else await srv.api('POST', `${q}/messages/${d.id}/ack`, { token: d.token })
      done++
    }
  }
}

const srv = await startServer()
try {
  const orders = 'shop:orders'
  const body = (i) => JSON.stringify({ order: 4100 + i, customer: `c-${(i * 37) % 500}`, total_cents: 1999 + i * 7 })
  // Deliveries now (history), then the schedule ahead.
  await publish(
    srv,
    orders,
    Array.from({ length: 240 }, (_, i) => ({ body: body(i), headers: { kind: 'close-cart', tenant: `t${i % 3}` } })),
  )
  await consume(srv, orders, 240, (d) => (Number(d.id) % 23 === 0 ? 'payment provider timeout' : null))
  await publish(
    srv,
    orders,
    spread(400, 55 * MIN, 7).map((delay_ms, i) => ({
      id: `order-${5000 + i}`,
      body: body(i),
      delay_ms,
      headers: { kind: 'close-cart', tenant: `t${i % 3}` },
      max_attempts: 5,
    })),
  )
  await publish(
    srv,
    orders,
    spread(300, 3 * 24 * 60 * MIN, 11).map((delay_ms, i) => ({ id: `reminder-${i}`, body: body(i), delay_ms })),
  )
  await makeDead(
    srv,
    orders,
    ['order-1001', 'order-1002', 'order-1003', 'order-1017'],
    'card declined: insufficient funds',
  )
  // The message page shows one of these: a body and headers as an application would send.
  for (const [id, customer] of [
    ['order-1021', 'c-117'],
    ['order-1022', 'c-342'],
  ])
    await makeDead(srv, orders, [id], 'address service: 503 Service Unavailable', {
      body: JSON.stringify({ order: id, customer, address: { city: 'Lyon', zip: '69002' }, total_cents: 4590 }),
      headers: { kind: 'ship-order', tenant: 't2', 'content-type': 'application/json' },
    })
  await makeDead(srv, orders, ['order-1030'], 'invalid JSON in body at byte 17')

  const mail = 'shop:emails'
  await publish(
    srv,
    mail,
    Array.from({ length: 90 }, (_, i) => ({ body: `welcome mail ${i}` })),
  )
  await consume(srv, mail, 60)
  await publish(
    srv,
    mail,
    spread(120, 50 * MIN, 3).map((delay_ms, i) => ({ body: `digest ${i}`, delay_ms })),
  )
  const reports = 'billing:reports'
  await publish(
    srv,
    reports,
    spread(24, 2 * 24 * 60 * MIN, 5).map((delay_ms, i) => ({ body: `monthly report ${i}`, delay_ms })),
  )
  await srv.api('POST', `/v1/queues/${encodeURIComponent(reports)}/pause`)
  await publish(srv, 'webhooks', [{ body: 'ping' }, { body: 'ping' }])

  const browser = await launch()
  try {
    const { page } = await openDashboard(browser, srv, ADMIN)
    await page.waitForSelector('#queues tr[data-queue="shop:orders"] td[data-col="scheduled"]:not(:empty)')
    await page.setViewportSize({ width: 1366, height: 480 })
    await page.mouse.move(0, 470)
    await page.screenshot({ path: `${docs}dashboard-overview.png` })
    await page.setViewportSize({ width: 1366, height: 900 })
    await page.goto(`${srv.base}/#/q/${encodeURIComponent(orders)}`)
    await page.waitForFunction(() => Number(document.querySelector('#upcoming')?.dataset.total) > 0, null, {
      timeout: WAIT,
    })
    await page.waitForSelector('#dead-table')
    await page.screenshot({
      path: `${docs}dashboard-queue.png`,
      fullPage: true,
      clip: { x: 0, y: 0, width: 1366, height: 1500 },
    })
    await page.goto(`${srv.base}/#/q/${encodeURIComponent(orders)}/m/order-1021`)
    await page.waitForSelector('#msg-state')
    await page.screenshot({ path: `${docs}dashboard-message.png`, fullPage: true })
    console.log(`screenshots: ${docs}dashboard-{overview,queue,message}.png`)
  } finally {
    await browser.close()
  }
} finally {
  await srv.stop()
}
