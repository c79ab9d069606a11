// The dashboard in a real browser (Debian's headless Chromium through playwright-core) against a
// real `redelay serve` and redis-server: it loads, shows counts and charts that change as
// messages are published through the API, searches, respawns dead letters, runs each action
// after a confirmation, a read-only token gets no action (and the server refuses them), and a
// hidden tab polls nothing. Every wait is for a condition (or, in a hidden tab, for a number of
// the page's poll periods), with generous timeouts; no test asserts a duration.
/* global document, location */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import {
  ADMIN,
  launch,
  launchTabs,
  makeDead,
  openDashboard,
  publish,
  signIn,
  startCluster,
  startServer,
  WAIT,
} from './lib.mjs'

let srv
let browser

before(async () => {
  srv = await startServer()
  browser = await launch()
})

after(async () => {
  await browser?.close()
  await srv?.stop()
})

const cell = (queue, col) => `#queues tr[data-queue="${queue}"] td[data-col="${col}"]`
const qs = (queue) => `/v1/queues/${encodeURIComponent(queue)}`

/** Waits until the element's text is `text`. */
async function waitText(page, selector, text) {
  await page.waitForFunction(([s, t]) => document.querySelector(s)?.textContent.trim() === t, [selector, text], {
    timeout: WAIT,
  })
}

/** Waits until `fn` (in Node) returns true, polling. */
async function until(fn, what) {
  const deadline = Date.now() + WAIT
  for (;;) {
    if (await fn()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** Clicks an action button (a selector), then the dialog's confirm button. */
async function confirmed(page, selector) {
  await page.click(selector)
  await page.waitForSelector('dialog#confirm[open]')
  await page.click('#confirm-ok')
  await page.waitForSelector('dialog#confirm:not([open])', { state: 'attached' })
}

describe('dashboard', () => {
  test('the page and its assets load without a token; the API needs one', async () => {
    const r = await fetch(`${srv.base}/`)
    assert.equal(r.status, 200)
    assert.match(r.headers.get('content-security-policy'), /script-src 'self'/)
    assert.match(await r.text(), /<script type="module" src="\/dashboard.mjs">/)
    for (const [path, type] of [
      ['/dashboard.mjs', 'text/javascript'],
      ['/dashboard.css', 'text/css'],
    ]) {
      const a = await fetch(`${srv.base}${path}`)
      assert.equal(a.status, 200, path)
      assert.ok(a.headers.get('content-type').startsWith(type), path)
    }
    assert.equal((await fetch(`${srv.base}/v1/overview`)).status, 401)
  })

  test('an unknown token is refused and the page asks again', async () => {
    const page = await browser.newPage()
    page.setDefaultTimeout(WAIT)
    await page.goto(`${srv.base}/`)
    await page.fill('#token', 'not-a-token-of-this-server')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => /refused/.test(document.querySelector('#login-error')?.textContent))
    assert.equal(await page.evaluate(() => sessionStorage.getItem('redelay.token')), null)
    await page.close()
  })

  test('the overview shows every queue and updates its counts in place', async () => {
    const q = 'app:orders'
    await publish(
      srv,
      q,
      [1, 2, 3].map((i) => ({ id: `o${i}`, body: `order ${i}`, delay_ms: 600000 })),
    )
    await publish(srv, 'other:q', [{ body: 'x', delay_ms: 600000 }])
    const { page, errors } = await openDashboard(browser, srv, ADMIN)
    await waitText(page, cell(q, 'scheduled'), '3')
    await waitText(page, cell('other:q', 'scheduled'), '1')
    await waitText(page, `${cell(q, 'state')} .badge`, 'active')
    const before = await page.$(cell(q, 'scheduled'))
    // Published through the API: the open page sees it at its next poll, in the same cell.
    await publish(srv, q, [{ id: 'o4', body: 'order 4', delay_ms: 600000 }])
    await waitText(page, cell(q, 'scheduled'), '4')
    assert.ok(await before.evaluate((el) => el.isConnected), 'the cell was updated, not rebuilt')
    // Deliveries and lateness show up once something is delivered.
    await publish(srv, q, [{ id: 'now1', body: 'due now' }])
    const got = await srv.api('POST', `${qs(q)}/fetch`, { max: 1, wait_ms: 10000 })
    await srv.api('POST', `${qs(q)}/messages/now1/ack`, { token: got.messages[0].token })
    await page.waitForFunction(
      (s) => document.querySelector(s)?.title === '1 delivered in the last hour',
      cell(q, 'per_minute'),
    )
    await page.waitForFunction((s) => /^< /.test(document.querySelector(s)?.textContent), cell(q, 'p99'))
    await srv.api('POST', `${qs(q)}/pause`)
    await waitText(page, `${cell(q, 'state')} .badge`, 'paused')
    await srv.api('POST', `${qs(q)}/resume`)
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('a lease that ran out shows as lapsed, on the overview and the queue page, until a fetch takes it back', async () => {
    const q = 'app:lapsed'
    await publish(srv, q, [
      { id: 'held', body: 'held' },
      { id: 'gone', body: 'gone' },
    ])
    // One lease for 10 minutes, one for the shortest ttr, whose consumer then never answers.
    await srv.api('POST', `${qs(q)}/fetch`, { max: 1, wait_ms: 10000, ttr_ms: 600000 })
    await srv.api('POST', `${qs(q)}/fetch`, { max: 1, wait_ms: 10000, ttr_ms: 100 })
    const lapsed = async () => (await srv.api('GET', `${qs(q)}/stats`)).lapsed === 1
    await until(lapsed, 'the short lease ran out on the Redis clock')
    const { page, errors } = await openDashboard(browser, srv, ADMIN)
    await waitText(page, cell(q, 'leased'), '2 (1 lapsed)')
    assert.equal(await page.$eval(cell(q, 'leased'), (el) => el.classList.contains('warn')), true)
    assert.match(await page.$eval(cell(q, 'leased'), (el) => el.title), /^1 of them past their lease/)
    await page.click(`#queues tr[data-queue="${q}"] a`)
    await waitText(page, '[data-stat="leased"]', '2 (1 lapsed)')
    // A fetch takes the lapsed one back (a failed attempt) and leases it again.
    const again = await srv.api('POST', `${qs(q)}/fetch`, { max: 1, wait_ms: 10000, ttr_ms: 600000 })
    assert.equal(again.messages[0].id, 'gone')
    await waitText(page, '[data-stat="leased"]', '2')
    assert.equal(await page.$eval('[data-stat="leased"]', (el) => el.classList.contains('warn')), false)
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('the queue page: upcoming and history charts change as messages come and go', async () => {
    const q = 'app:charts'
    await publish(
      srv,
      q,
      [1, 2, 3].map((i) => ({ id: `c${i}`, body: `c${i}`, delay_ms: 5 * 60000 })),
    )
    const { page, errors } = await openDashboard(browser, srv, ADMIN)
    // By keyboard: the queue's link, then Enter.
    const link = await page.waitForSelector(`#queues tr[data-queue="${q}"] a`)
    await link.focus()
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => document.querySelector('#upcoming')?.dataset.total === '3')
    await waitText(page, '[data-stat="scheduled"]', '3')
    await publish(
      srv,
      q,
      [4, 5].map((i) => ({ id: `c${i}`, body: `c${i}`, delay_ms: 20 * 60000 })),
    )
    await page.waitForFunction(() => document.querySelector('#upcoming')?.dataset.total === '5')
    assert.equal(await page.$$eval('#upcoming rect.bar', (bars) => bars.length), 2)
    // Next 3 days per hour: one more due in 30 hours counts there, not in the next hour.
    await publish(srv, q, [{ id: 'later', body: 'later', delay_ms: 30 * 3600000 }])
    await page.click('button[data-mode="days"]')
    await page.waitForFunction(() => document.querySelector('#upcoming')?.dataset.total === '6')
    await page.click('button[data-mode="hour"]')
    await page.waitForFunction(() => document.querySelector('#upcoming')?.dataset.total === '5')
    // Delivered and acked: the throughput chart counts it.
    await srv.api('POST', `${qs(q)}/bulk`, { action: 'deliver_now', ids: ['c1'] })
    const got = await srv.api('POST', `${qs(q)}/fetch`, { max: 1, wait_ms: 10000 })
    await srv.api('POST', `${qs(q)}/messages/c1/ack`, { token: got.messages[0].token })
    await page.waitForFunction(() => {
      const s = JSON.parse(document.querySelector('#throughput')?.dataset.sums || '{}')
      return s.delivered === 1 && s.acked === 1
    })
    await page.waitForSelector('#lateness circle')
    // The last 2 days per hour count it too (the current hour).
    await page.click('button[data-range="days"]')
    await page.waitForFunction(() =>
      /^Last 2 days, per hour: .*delivered 1\b/.test(document.querySelector('#throughput-note')?.textContent),
    )
    assert.equal(JSON.parse(await page.getAttribute('#throughput', 'data-sums')).delivered, 1)
    // The last 90 days per UTC day (91 points, today's counting it), labelled by date.
    await page.click('button[data-range="months"]')
    await page.waitForFunction(() =>
      /^Last 90 days, per UTC day: .*delivered 1\b.*Days in UTC\.$/.test(
        document.querySelector('#throughput-note')?.textContent,
      ),
    )
    assert.equal(JSON.parse(await page.getAttribute('#throughput', 'data-sums')).delivered, 1)
    const today = new Date().toISOString().slice(0, 10)
    assert.ok((await page.textContent('#throughput')).includes(today), `the axis names ${today}`)
    await page.click('button[data-range="hour"]')
    await page.waitForFunction(() =>
      /^Last hour, per minute: /.test(document.querySelector('#throughput-note')?.textContent),
    )
    await page.waitForFunction(() => document.querySelector('#upcoming')?.dataset.total === '4')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('search by header, body text, id prefix and error', async () => {
    const q = 'app:search'
    await publish(srv, q, [
      { id: 'inv-1', body: '{"customer":"acme","total":12}', headers: { tenant: 'acme' }, delay_ms: 600000 },
      { id: 'inv-2', body: 'plain text with a needle inside', headers: { tenant: 'globex' }, delay_ms: 600000 },
      { id: 'rcpt-1', body: 'nothing', delay_ms: 600000 },
    ])
    await makeDead(srv, q, ['bad-1'], 'parser exploded at byte 3')
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}`)
    const search = async (kind, text) => {
      await page.selectOption('#search-kind', kind)
      await page.fill('#search-text', text)
      await page.press('#search-text', 'Enter')
      await page.waitForFunction(() => /found/.test(document.querySelector('#search-note')?.textContent))
      return page.$$eval('#search-table tbody tr', (rows) => rows.map((r) => r.dataset.id).sort())
    }
    assert.deepEqual(await search('header', 'tenant:acme'), ['inv-1'])
    assert.deepEqual(await search('body', 'needle'), ['inv-2'])
    assert.deepEqual(await search('id_prefix', 'inv-'), ['inv-1', 'inv-2'])
    assert.deepEqual(await search('error', 'exploded'), ['bad-1'])
    assert.deepEqual(await search('body', 'no such text'), [])
    // A found message opens; its JSON body is pretty-printed, and shows as hex on demand.
    await search('header', 'tenant:acme')
    await page.click('#search-table a')
    await waitText(page, '#msg-state', 'scheduled')
    await page.waitForFunction(() => document.querySelector('#body')?.textContent.includes('"customer": "acme"'))
    await page.click('button[data-mode="hex"]')
    await page.waitForFunction(() => document.querySelector('#body')?.textContent.startsWith('00000000  7b 22 63'))
    await page.click('button[data-mode="text"]')
    await waitText(page, '#body', '{"customer":"acme","total":12}')
    assert.match(await page.textContent('#headers'), /tenant\s*acme/)
    assert.match(await page.textContent('#timeline'), /published[\s\S]*due/)
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('dead letters grouped by error: respawn a group, then one dead letter', async () => {
    const q = 'app:jobs'
    await makeDead(srv, q, ['j1', 'j2', 'j3'], 'upstream timeout')
    await makeDead(srv, q, ['j4'], 'bad request: no customer')
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}`)
    await waitText(page, '[data-stat="dead"]', '4')
    await page.waitForSelector('#dead-table tr[data-error="upstream timeout"]')
    assert.equal(await page.textContent('#dead-table tr[data-error="upstream timeout"] td.num'), '3')
    // Cancelling the dialog does nothing.
    await page.click('#dead-table tr[data-error="upstream timeout"] button[data-action="Respawn"]')
    await page.waitForSelector('dialog#confirm[open]')
    await page.keyboard.press('Escape')
    await page.waitForSelector('dialog#confirm:not([open])', { state: 'attached' })
    assert.equal((await srv.api('GET', `${qs(q)}/stats`)).dead, 4)
    await confirmed(page, '#dead-table tr[data-error="upstream timeout"] button[data-action="Respawn"]')
    await page.waitForFunction(() => /Respawned 3 of 3/.test(document.querySelector('#result')?.textContent))
    await waitText(page, '[data-stat="dead"]', '1')
    await page.waitForFunction(() => !document.querySelector('#dead-table tr[data-error="upstream timeout"]'))
    // The one left, from its detail page.
    await page.click('#dead-table tr[data-error="bad request: no customer"] a')
    await waitText(page, '#msg-state', 'dead')
    await confirmed(page, 'button[data-action="Respawn"]')
    await page.waitForFunction(() => /j4 respawned/.test(document.querySelector('#result')?.textContent))
    await waitText(page, '#msg-state', 'ready')
    assert.equal((await srv.api('GET', `${qs(q)}/stats`)).dead, 0)
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('a respawn keeps, clears or sets the expiry chosen in its dialog', async () => {
    const q = 'app:expiry'
    const day = 86_400_000
    await makeDead(srv, q, ['e1', 'e2'], 'flaky upstream', { expires_in_ms: day })
    await makeDead(srv, q, ['e3'], 'bad input', { expires_in_ms: day })
    await makeDead(srv, q, ['e4'], 'kept', { expires_in_ms: day })
    const expiry = async (id) => (await srv.api('GET', `${qs(q)}/messages/${id}`)).expires_at_ms
    const kept = await expiry('e4')
    assert.ok(kept > Date.now())
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}`)
    await waitText(page, '[data-stat="dead"]', '4')
    // A group, never to expire.
    await page.click('#dead-table tr[data-error="flaky upstream"] button[data-action="Respawn"]')
    await page.waitForSelector('dialog#confirm[open] #respawn-expiry')
    assert.equal(await page.isVisible('#respawn-expiry-s'), false)
    await page.selectOption('#respawn-expiry', 'clear')
    await page.click('#confirm-ok')
    await page.waitForFunction(() =>
      /Respawned 2 of 2 .*, never to expire/.test(document.querySelector('#result')?.textContent),
    )
    assert.equal(await expiry('e1'), null)
    assert.equal(await expiry('e2'), null)
    // One message, from its page. Bad numbers change nothing: 0 keeps the dialog open (the
    // field's own check) until cancelled; an empty field is refused with a message.
    await page.click('#dead-table tr[data-error="bad input"] a')
    await waitText(page, '#msg-state', 'dead')
    await page.click('button[data-action="Respawn"]')
    await page.waitForSelector('dialog#confirm[open] #respawn-expiry')
    await page.selectOption('#respawn-expiry', 'in')
    await page.fill('#respawn-expiry-s', '0')
    await page.click('#confirm-ok')
    assert.equal(await page.isVisible('dialog#confirm[open] #respawn-expiry-s:invalid'), true)
    await page.click('#confirm-cancel')
    await page.waitForSelector('dialog#confirm:not([open])', { state: 'attached' })
    await page.click('button[data-action="Respawn"]')
    await page.waitForSelector('dialog#confirm[open] #respawn-expiry')
    await page.selectOption('#respawn-expiry', 'in')
    await page.fill('#respawn-expiry-s', '')
    await page.click('#confirm-ok')
    await page.waitForFunction(() =>
      /failed: expiry: give a number of seconds, 1 or more/.test(document.querySelector('#result')?.textContent),
    )
    assert.equal((await srv.api('GET', `${qs(q)}/messages/e3`)).state, 'dead')
    await page.click('button[data-action="Respawn"]')
    await page.waitForSelector('dialog#confirm[open] #respawn-expiry')
    assert.equal(await page.inputValue('#respawn-expiry'), 'keep') // each dialog starts afresh
    await page.selectOption('#respawn-expiry', 'in')
    await page.fill('#respawn-expiry-s', '600')
    const before = Date.now()
    await page.click('#confirm-ok')
    await page.waitForFunction(() =>
      /e3 respawned: due now, expiring in 10 min/.test(document.querySelector('#result')?.textContent),
    )
    const after = Date.now()
    const e3 = await expiry('e3')
    // Redis' clock and this one are the same machine's: a second of slack either side.
    assert.ok(e3 >= before + 600_000 - 1000 && e3 <= after + 600_000 + 1000, `expires_at_ms ${e3}`)
    // The rest, keeping their own expiry (the default choice).
    await page.goto(`${srv.base}/#/q/${encodeURIComponent(q)}`)
    await confirmed(page, 'button[data-action="Respawn all"]')
    await page.waitForFunction(() => /Respawned 1 dead letters\./.test(document.querySelector('#result')?.textContent))
    assert.equal(await expiry('e4'), kept)
    assert.equal((await srv.api('GET', `${qs(q)}/stats`)).dead, 0)
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('message actions ask to confirm and say what they did', async () => {
    const q = 'app:actions'
    await publish(srv, q, [{ id: 'm1', body: 'hello', delay_ms: 3600000 }])
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}/m/m1`)
    await waitText(page, '#msg-state', 'scheduled')
    const due = async () => (await srv.api('GET', `${qs(q)}/messages/m1`)).due_at_ms
    const first = await due()
    // Deliver now.
    await confirmed(page, 'button[data-action="Deliver now"]')
    await page.waitForFunction(() => /m1 is due now/.test(document.querySelector('#result')?.textContent))
    assert.ok((await due()) < first)
    await waitText(page, '#msg-state', 'ready')
    // Reschedule in 2 hours (the new due time is later than the first one, an hour away).
    await page.fill('#reschedule-s', '7200')
    await confirmed(page, 'button[data-action="Reschedule"]')
    await page.waitForFunction(() => /m1 rescheduled: due at/.test(document.querySelector('#result')?.textContent))
    assert.ok((await due()) > first)
    await waitText(page, '#msg-state', 'scheduled')
    // Cancel: gone, and back on the queue page.
    await confirmed(page, 'button[data-action="Cancel"]')
    await page.waitForSelector('#upcoming')
    await until(async () => {
      const r = await fetch(`${srv.base}${qs(q)}/messages/m1`, { headers: { authorization: `Bearer ${ADMIN}` } })
      return r.status === 404
    }, 'm1 to be cancelled')
    // Pause and resume from the queue page.
    await confirmed(page, 'button[data-action="Pause"]')
    await waitText(page, '#queue-state', 'paused')
    assert.equal((await srv.api('GET', `${qs(q)}/stats`)).paused, true)
    await confirmed(page, 'button[data-action="Resume"]')
    await waitText(page, '#queue-state', 'active')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('stored data cannot reorder or disguise the page: bidi and control characters show as escapes', async () => {
    const q = 'app:bidi'
    const id = 'rtl-\u202Ecod.exe'
    const reason = 'upstream timeout \u202E  :ton si siht'
    await makeDead(srv, q, [id], reason)
    await publish(srv, q, [
      {
        id: 'h\u200Bidden',
        body: 'body \u2067text\u2069 \u0007',
        headers: { 'x-\u202Bname': 'v\u200Fal' },
        delay_ms: 600000,
      },
    ])
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}`)
    // No bidi control, zero-width or control character reaches the page's text.
    const clean = () =>
      page.evaluate(
        () =>
          // eslint-disable-next-line no-control-regex -- control characters are what it looks for
          !/[\u0000-\u0009\u000b-\u001f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069]/.test(document.body.textContent),
      )
    const row = `#dead-table tr[data-error="${reason}"]`
    await page.waitForSelector(row)
    await page.waitForFunction(() => document.querySelector('#list-table, #list-box .empty'))
    assert.equal(await page.textContent(`${row} td.wrap`), 'upstream timeout \\u{202e}  :ton si siht')
    assert.equal(await page.textContent(`${row} td.wrap a`), 'rtl-\\u{202e}cod.exe')
    assert.equal(await page.$eval(`${row} td.wrap`, (td) => td.querySelector('bdi.data') !== null), true)
    assert.ok(await clean(), 'the queue page holds no hidden character')
    // The dialog's sentence: the error isolated in it, its control shown.
    await page.click(`${row} button[data-action="Purge"]`)
    await page.waitForSelector('dialog#confirm[open]')
    const text = await page.textContent('#confirm-text')
    assert.match(
      text,
      /^Every dead letter whose last error contains “upstream timeout \\u\{202e\} {2}:ton si siht” is deleted/,
    )
    assert.equal(await page.$$eval('#confirm-text bdi.data .ctl', (c) => c.length), 1)
    assert.ok(await clean(), 'the dialog holds no hidden character')
    await page.keyboard.press('Escape')
    await page.waitForSelector('dialog#confirm:not([open])', { state: 'attached' })
    // The message page: id, error, crumbs; and another message's headers and body.
    await page.click(`${row} td.wrap a`)
    await waitText(page, '#msg-state', 'dead')
    assert.equal((await page.textContent('h1')).trim(), 'Message rtl-\\u{202e}cod.exe')
    assert.ok(await clean(), 'the message page holds no hidden character')
    assert.equal(await page.title(), 'rtl-\\u{202e}cod.exe · redelay')
    await page.goto(`${srv.base}/#/q/${encodeURIComponent(q)}/m/${encodeURIComponent('h\u200Bidden')}`)
    await waitText(page, '#msg-state', 'scheduled')
    await waitText(page, '#body', 'body \\u{2067}text\\u{2069} \\u{7}')
    assert.match(await page.textContent('#headers'), /x-\\u\{202b\}name\s*v\\u\{200f\}al/)
    assert.ok(await clean(), 'headers and body hold no hidden character')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('a group respawn or purge says it takes every error containing its text', async () => {
    const q = 'app:groups'
    await makeDead(srv, q, ['t1', 't2'], 'timeout')
    await makeDead(srv, q, ['t3'], 'upstream timeout')
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}`)
    await page.waitForSelector('#dead-table tr[data-error="upstream timeout"]')
    await page.click('#dead-table tr[data-error="timeout"] button[data-action="Purge"]')
    await page.waitForSelector('dialog#confirm[open]')
    assert.match(
      await page.textContent('#confirm-title'),
      /^Purge every dead letter whose last error contains “timeout”$/,
    )
    assert.match(
      await page.textContent('#confirm-text'),
      /^Every dead letter whose last error contains “timeout” is deleted for good: this group's 2, and also those of the group “upstream timeout” \(1\)\.$/,
    )
    await page.keyboard.press('Escape')
    await page.waitForSelector('dialog#confirm:not([open])', { state: 'attached' })
    await page.click('#dead-table tr[data-error="upstream timeout"] button[data-action="Purge"]')
    await page.waitForSelector('dialog#confirm[open]')
    assert.match(await page.textContent('#confirm-text'), /: this group's 1\.$/)
    await page.keyboard.press('Escape')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('reschedule refuses an empty or negative delay instead of delivering at once', async () => {
    const q = 'app:resched'
    await publish(srv, q, [{ id: 'r1', body: 'x', delay_ms: 3600000 }])
    const due = async () => (await srv.api('GET', `${qs(q)}/messages/r1`)).due_at_ms
    const first = await due()
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}/m/r1`)
    await waitText(page, '#msg-state', 'scheduled')
    for (const v of ['', '-5']) {
      await page.fill('#reschedule-s', v)
      await page.click('button[data-action="Reschedule"]')
      await page.waitForFunction(
        (v) =>
          document.querySelector('#result')?.textContent ===
          `Reschedule r1: refused: give a number of seconds, 0 or more (got “${v}”)`,
        v,
      )
      assert.equal(await page.isVisible('dialog#confirm[open]'), false)
    }
    assert.equal(await due(), first)
    assert.equal((await srv.api('GET', `${qs(q)}/messages/r1`)).state, 'scheduled')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('a message id ".." is never sent as a path step (it would name the queue itself)', async () => {
    const q = 'app:dots'
    // The core refuses such ids now; a link to one (from a stored page, an older server) must
    // still never reach the queue's own routes.
    await publish(srv, q, [{ id: 'keep', body: 'x', delay_ms: 600000 }])
    const { page } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}/m/..`)
    await page.waitForFunction(() =>
      /cannot be reached from a browser/.test(document.querySelector('#toast')?.textContent),
    )
    assert.equal(await page.$('#gone'), null, 'not shown as gone')
    assert.equal((await srv.api('GET', `${qs(q)}/stats`)).scheduled, 1)
    await page.close()
  })

  test("times use Redis' clock, not the browser's, and say their zone", async () => {
    const q = 'app:clock'
    await publish(
      srv,
      q,
      [1, 2, 3].map((i) => ({ id: `k${i}`, body: 'x', delay_ms: 10 * 60000 })),
    )
    // The browser's clock 2 hours ahead, in India (UTC+05:30, no summer time).
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}`, {
      timezoneId: 'Asia/Kolkata',
      setup: (p) => p.clock.install({ time: Date.now() + 2 * 3600000 }),
    })
    await page.waitForFunction(() => document.querySelector('#upcoming')?.dataset.total === '3')
    assert.match(await page.textContent('#upcoming-note'), /Times in UTC\+05:30\.$/)
    await page.goto(`${srv.base}/#/q/${encodeURIComponent(q)}/m/k1`)
    await page.waitForFunction(() => /due \(in (9|10) min/.test(document.querySelector('#timeline')?.textContent))
    assert.match(await page.textContent('#timeline'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+05:30 — published/)
    // The header's time of the last update, with its zone, takes one line and fits its box; so
    // does its longest form, once the server has not answered for a while (every request
    // failing, and the page's clock jumping a minute ahead).
    const live = () =>
      page.$eval('#live', (el) => {
        const text = document.createRange()
        text.selectNodeContents(el)
        return { text: el.textContent, lines: text.getClientRects().length, fits: el.scrollWidth <= el.clientWidth }
      })
    assert.match((await live()).text, /^updated \d\d:\d\d:\d\d UTC\+05:30$/)
    assert.deepEqual(await live(), { ...(await live()), lines: 1, fits: true })
    const gateway = (url) => url.pathname.startsWith('/v1/')
    await page.route(gateway, (r) => r.abort())
    await page.clock.fastForward(60000)
    await page.waitForSelector('#live.stale')
    await page.unroute(gateway)
    const stale = await live()
    assert.match(stale.text, /^stale since \d\d:\d\d:\d\d UTC\+05:30$/)
    assert.deepEqual(stale, { ...stale, lines: 1, fits: true })
    // The failed requests' own console errors only.
    assert.deepEqual(
      errors.filter((e) => !/net::ERR_FAILED/.test(e)),
      [],
    )
    await page.close()
  })

  test('a read-only token sees its namespace, gets no action, and the server refuses them', async () => {
    const q = 'app:readonly'
    await makeDead(srv, q, ['r1'], 'broken')
    await publish(srv, q, [{ id: 'r2', body: 'waiting', delay_ms: 600000 }])
    const ro = srv.token('app', true)
    const { page, errors } = await openDashboard(browser, srv, ro)
    await page.waitForSelector('#read-only-badge')
    await waitText(page, cell(q, 'dead'), '1')
    // Only its namespace.
    assert.equal(await page.$(`#queues tr[data-queue="other:q"]`), null)
    await page.goto(`${srv.base}/#/q/${encodeURIComponent(q)}`)
    await page.waitForSelector('#dead-table tr[data-error="broken"]')
    await page.waitForSelector('#read-only-note')
    assert.equal(await page.$$eval('button[data-action]', (b) => b.length), 0)
    await page.goto(`${srv.base}/#/q/${encodeURIComponent(q)}/m/r1`)
    await waitText(page, '#msg-state', 'dead')
    assert.equal(await page.$$eval('button[data-action]', (b) => b.length), 0)
    // The page's own token, straight at the API: every change is 403.
    const statuses = await page.evaluate(async (base) => {
      const token = sessionStorage.getItem('redelay.token')
      const call = (method, path, body) =>
        fetch(path, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: body && JSON.stringify(body),
        }).then((r) => r.status)
      return [
        await call('POST', `${base}/pause`),
        await call('POST', `${base}/dead/respawn`, { ids: ['r1'] }),
        await call('POST', `${base}/bulk`, { action: 'purge', search: { error: 'broken' } }),
        await call('DELETE', `${base}/messages/r2`),
        await call('POST', `${base}/messages/r2/reschedule`, { delay_ms: 0 }),
        await call('GET', `${base}/stats`),
      ]
    }, qs(q))
    assert.deepEqual(statuses, [403, 403, 403, 403, 403, 200])
    const s = await srv.api('GET', `${qs(q)}/stats`)
    assert.deepEqual([s.dead, s.scheduled, s.paused], [1, 1, false])
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('a search stopped before the end of the queue goes further on demand, and a new one starts over', async () => {
    const q = 'app:searchfurther'
    // 30,000 records, more than a search's 40 steps scan (about 500 records a step): 60 of them
    // match, spread over the whole queue, and 3 others for a second query.
    const N = 30000
    const hits = []
    for (let from = 0; from < N; from += 5000)
      await publish(
        srv,
        q,
        Array.from({ length: 5000 }, (_, i) => {
          const k = from + i
          const id = k % 500 === 0 ? `hit-${k}` : `x-${k}`
          if (id.startsWith('hit-')) hits.push(id)
          return { id, body: 'x', delay_ms: 3600000 }
        }),
      )
    await publish(
      srv,
      q,
      [1, 2, 3].map((i) => ({ id: `other-${i}`, body: 'x', delay_ms: 3600000 })),
    )
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}`)
    const rows = () => page.$$eval('#search-table tbody tr', (r) => r.map((tr) => tr.dataset.id))
    const note = () => page.textContent('#search-note')
    const search = async (text) => {
      await page.selectOption('#search-kind', 'id_prefix')
      await page.fill('#search-text', text)
      await page.press('#search-text', 'Enter')
    }
    /** "Search further" until the end of the queue. */
    const further = async () => {
      for (let clicks = 0; await page.isVisible('#search-more'); clicks++) {
        assert.ok(clicks < 10, 'the search reaches the end')
        const before = await note()
        await page.click('#search-more')
        // Done when the note counts again (more records scanned than before).
        await page.waitForFunction((b) => {
          const t = document.querySelector('#search-note')?.textContent
          return /^[\d,]+ found, /.test(t) && t !== b
        }, before)
      }
    }
    await search('hit-')
    await page.waitForFunction(() =>
      /^[\d,]+ found, [\d,]+ records scanned \(stopped before the end of the queue\)\.$/.test(
        document.querySelector('#search-note')?.textContent,
      ),
    )
    const first = await rows()
    assert.ok(first.length > 0 && first.length < hits.length, `${first.length} found in the first steps`)
    assert.match(await note(), new RegExp(`^${first.length} found`))
    assert.equal(await page.isVisible('#search-more'), true)
    // Further, until the end: each time adds to what is shown, never the same message twice.
    await further()
    const all = await rows()
    assert.equal(new Set(all).size, all.length, 'no message twice')
    assert.deepEqual([...all].sort(), [...hits].sort())
    assert.match(await note(), /^60 found, [\d,]+ records scanned\.$/)
    assert.ok(
      all.slice(0, first.length).every((id, i) => id === first[i]),
      'the first results stay first',
    )
    // A new query while a "Search further" of the old one is on its way: the old one's answer
    // (held back until the new search has run) is dropped, never mixed in.
    await search('hit-')
    await page.waitForSelector('#search-more:not([hidden]):not([aria-disabled="true"])')
    let release
    const held = new Promise((r) => (release = r))
    let stale = 0
    const oldQuery = (url) => url.pathname.endsWith('/search') && url.searchParams.get('id_prefix') === 'hit-'
    await page.route(oldQuery, async (route) => {
      await held
      await route.continue()
    })
    const staleDone = new Promise((resolve) =>
      page.on('requestfinished', (r) => {
        if (new URL(r.url()).searchParams.get('id_prefix') === 'hit-' && ++stale === 1) resolve()
      }),
    )
    await page.click('#search-more')
    await search('other-')
    await page.waitForFunction(() => /^[\d,]+ found, /.test(document.querySelector('#search-note')?.textContent))
    release()
    await staleDone
    await page.unroute(oldQuery)
    // Had the old search gone on, its next step would be another request (counted below), and
    // its results would show among the new ones (checked now and at the new search's end).
    const shown = await rows()
    assert.ok(
      shown.every((id) => id.startsWith('other-')),
      `only the new query's results: ${shown.join(' ')}`,
    )
    assert.match(await note(), new RegExp(`^${shown.length} found, `))
    await further()
    assert.deepEqual((await rows()).sort(), ['other-1', 'other-2', 'other-3'])
    assert.match(await note(), /^3 found, [\d,]+ records scanned\.$/)
    assert.equal(stale, 1, 'the old search took no further step')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('the overview shows its queues a page at a time, and says which ones it shows', async () => {
    // A namespace of its own: 120 queues, more than a page of 100.
    const names = Array.from({ length: 120 }, (_, i) => `pages:q${String(i).padStart(3, '0')}`)
    for (let i = 0; i < names.length; i += 12)
      await Promise.all(names.slice(i, i + 12).map((n) => publish(srv, n, [{ body: 'x', delay_ms: 600000 }])))
    const token = srv.token('pages')
    const { page, errors } = await openDashboard(browser, srv, token)
    const rows = () => page.$$eval('#queues tbody tr', (r) => r.map((tr) => tr.dataset.queue))
    await waitText(page, '#overview-summary', 'Showing queues 1–100 of 120, by name.')
    assert.deepEqual(await rows(), names.slice(0, 100))
    assert.equal((await page.textContent('#overview-page')).trim(), 'Page 1 of 2')
    assert.equal(await page.$('a#overview-prev'), null, 'no previous page')
    await page.click('a#overview-next')
    await waitText(page, '#overview-summary', 'Showing queues 101–120 of 120, by name.')
    assert.deepEqual(await rows(), names.slice(100))
    assert.equal(await page.evaluate(() => location.hash), '#/page/2')
    assert.equal(await page.$('a#overview-next'), null, 'no next page')
    // A new queue shows up on the open page, and in the count.
    await publish(srv, 'pages:q120', [{ body: 'x', delay_ms: 600000 }])
    await waitText(page, '#overview-summary', 'Showing queues 101–121 of 121, by name.')
    await waitText(page, cell('pages:q120', 'scheduled'), '1')
    // Back to the first page (the browser's Back), and a page past the end says so.
    await page.goBack()
    await waitText(page, '#overview-summary', 'Showing queues 1–100 of 121, by name.')
    await page.goto(`${srv.base}/#/page/9`)
    await waitText(page, '#overview-summary', 'No queue on page 9: there are 121 queues, on 2 pages.')
    assert.equal(await page.getAttribute('a#overview-prev', 'href'), '#/page/2')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('the overview filters queues by name, a page of 100 at a time, in its address', async () => {
    // A namespace of its own: 110 "blue" queues (more than a page) and 5 "red" ones.
    const blue = Array.from({ length: 110 }, (_, i) => `flt:blue-${String(i).padStart(3, '0')}`)
    const red = Array.from({ length: 5 }, (_, i) => `flt:red-${i}`)
    const names = [...blue, ...red]
    for (let i = 0; i < names.length; i += 12)
      await Promise.all(names.slice(i, i + 12).map((n) => publish(srv, n, [{ body: 'x', delay_ms: 600000 }])))
    const { page, errors } = await openDashboard(browser, srv, srv.token('flt'))
    const rows = () => page.$$eval('#queues tbody tr', (r) => r.map((tr) => tr.dataset.queue))
    const hash = () => page.evaluate(() => location.hash)
    await waitText(page, '#overview-summary', 'Showing queues 1–100 of 115, by name.')
    // Typed: the first page of the matches (either case), the address follows.
    await page.fill('#overview-filter', 'BLUE')
    await waitText(page, '#overview-summary', 'Showing queues 1–100 of 110 whose name contains “BLUE”, by name.')
    assert.deepEqual(await rows(), blue.slice(0, 100))
    assert.equal(await hash(), '#/?contains=BLUE')
    await page.click('a#overview-next')
    await waitText(page, '#overview-summary', 'Showing queues 101–110 of 110 whose name contains “BLUE”, by name.')
    assert.deepEqual(await rows(), blue.slice(100))
    assert.equal(await hash(), '#/page/2?contains=BLUE')
    assert.equal(await page.inputValue('#overview-filter'), 'BLUE')
    assert.equal((await page.textContent('#overview-page')).trim(), 'Page 2 of 2')
    // A reload keeps the page and the filter; Back goes to its first page.
    await page.reload()
    await waitText(page, '#overview-summary', 'Showing queues 101–110 of 110 whose name contains “BLUE”, by name.')
    await page.goBack()
    await waitText(page, '#overview-summary', 'Showing queues 1–100 of 110 whose name contains “BLUE”, by name.')
    // Typed on page 2: back to page 1 of the new matches.
    await page.goto(`${srv.base}/#/page/2?contains=blue`)
    await waitText(page, '#overview-summary', 'Showing queues 101–110 of 110 whose name contains “blue”, by name.')
    await page.fill('#overview-filter', 'red')
    await waitText(page, '#overview-summary', '5 queues whose name contains “red”.')
    assert.deepEqual(await rows(), red)
    assert.equal(await hash(), '#/?contains=red')
    assert.equal(await page.isVisible('#overview-pager'), false, 'one page: no pager')
    await page.fill('#overview-filter', 'green')
    await waitText(page, '#overview-summary', 'No queue whose name contains “green”.')
    assert.deepEqual(await rows(), [])
    await page.fill('#overview-filter', '')
    await waitText(page, '#overview-summary', 'Showing queues 1–100 of 115, by name.')
    assert.equal(await hash(), '#/')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('a hidden tab polls nothing; shown again, it polls at once and goes on', async () => {
    // Hidden for real: another tab opened in front of the dashboard's, in the same window, as a
    // user switching tabs does; then the dashboard's tab brought to front again (see launchTabs).
    const q = 'app:hidden'
    await publish(srv, q, [{ body: 'x', delay_ms: 600000 }])
    const tabs = await launchTabs()
    try {
      const tab = await tabs.tab()
      // When Node heard of each request of the page to the gateway (Playwright's request events).
      const requests = []
      tab.on('request', (r) => r.url().startsWith(`${srv.base}/v1/`) && requests.push(Date.now()))
      const { page, errors } = await signIn(tab, srv, ADMIN)
      const visibility = (state) => page.waitForFunction((s) => document.visibilityState === s, state, { polling: 100 })
      await visibility('visible')
      await waitText(page, cell(q, 'scheduled'), '1')
      // The page's own poll period, as it polls: the longer gap between three polls.
      const n0 = requests.length
      await until(() => requests.length >= n0 + 3, 'three polls')
      const period = Math.max(requests[n0 + 1] - requests[n0], requests[n0 + 2] - requests[n0 + 1])
      // Hidden: no request for five periods (one in flight was sent before), though a message
      // published meanwhile changes what the page shows.
      const front = await tabs.tab()
      await visibility('hidden')
      // A poll the page sent just before it was hidden may be reported a moment later: let it
      // arrive before counting.
      await new Promise((r) => setTimeout(r, 500))
      const n1 = requests.length
      await publish(srv, q, [{ body: 'y', delay_ms: 600000 }])
      await new Promise((r) => setTimeout(r, 5 * period))
      assert.equal(requests.length - n1, 0, `requests while hidden for 5 polls of ${period} ms`)
      assert.equal((await page.textContent(cell(q, 'scheduled'))).trim(), '1')
      // Shown again: the news at once, then the page goes on polling.
      await page.bringToFront()
      await visibility('visible')
      await waitText(page, cell(q, 'scheduled'), '2')
      const n2 = requests.length
      await until(() => requests.length >= n2 + 2, 'two more polls')
      assert.equal(await front.evaluate(() => document.visibilityState), 'hidden')
      assert.deepEqual(errors, [])
    } finally {
      await tabs.close()
    }
  })

  test('a queue ".." registered before such names were refused is named apart, and the overview works', async () => {
    // No client can open it (a URL resolves ".." away, however encoded; the core refuses the
    // name): the overview failed whole. Put in the registry as an older version left it.
    const registry = ['-u', process.env.REDIS_URL, '--no-raw']
    const key = `${srv.prefix}:queues`
    await publish(srv, 'app:beside-dots', [{ body: 'x', delay_ms: 600000 }])
    execFileSync('redis-cli', [...registry, 'SADD', key, '..'])
    try {
      const { page, errors } = await openDashboard(browser, srv, ADMIN, '#/?contains=beside-dots')
      await waitText(page, '#overview-summary', '1 queue whose name contains “beside-dots”.')
      assert.equal(await page.isVisible('#overview-unreachable'), false, 'the filter leaves ".." out')
      await page.fill('#overview-filter', '.')
      await page.waitForFunction(() =>
        /^Not shown: “\.\.”, registered before such names were refused: no client can open it/.test(
          document.querySelector('#overview-unreachable')?.textContent,
        ),
      )
      assert.equal(await page.isVisible('#overview-unreachable'), true)
      assert.deepEqual(errors, [])
      await page.close()
    } finally {
      execFileSync('redis-cli', [...registry, 'SREM', key, '..'])
    }
  })

  test('the message page does not download a large body again at every poll', async () => {
    const q = 'app:bigbody'
    await publish(srv, q, [{ id: 'big', body: 'x'.repeat(1024 * 1024), delay_ms: 3600000 }])
    // Counts the page's reads of the message: whole (its 1 MiB body with it) or without the body
    // (`?body=false`, what a poll reads).
    const reads = { whole: 0, lean: 0 }
    const path = new URL(`${srv.base}${qs(q)}/messages/big`).pathname
    const { page, errors } = await openDashboard(browser, srv, ADMIN, `#/q/${encodeURIComponent(q)}/m/big`, {
      setup: (p) =>
        p.on('request', (r) => {
          const u = new URL(r.url())
          if (r.method() !== 'GET' || u.pathname !== path) return
          if (u.searchParams.get('body') === 'false') reads.lean++
          else reads.whole++
        }),
    })
    await waitText(page, '#msg-state', 'scheduled')
    await until(() => reads.whole >= 1 && reads.lean >= 1, 'the first read')
    const [w0, l0] = [reads.whole, reads.lean]
    const timeline0 = await page.textContent('#timeline')
    // Five polls later: the body was not read again, and the timeline's times still moved.
    await until(() => reads.lean >= l0 + 5, 'five polls')
    assert.equal(reads.whole - w0, 0, `${reads.whole - w0} reads of the body in ${reads.lean - l0} polls`)
    assert.notEqual(await page.textContent('#timeline'), timeline0)
    assert.equal(await page.textContent('#facts dd:nth-of-type(6)'), '1,048,576 bytes')
    assert.equal((await page.textContent('#body')).length, 1024 * 1024)
    // A change made elsewhere shows at the next poll, still without the body; a message
    // published anew under the id (another body) is read whole.
    await srv.api('POST', `${qs(q)}/messages/big/reschedule`, { delay_ms: 0 })
    await waitText(page, '#msg-state', 'ready')
    assert.equal(reads.whole - w0, 0, 'a state change read the body')
    await srv.api('DELETE', `${qs(q)}/messages/big`)
    await waitText(page, '#gone', 'gone: no message with this id (acked, cancelled or purged)')
    await publish(srv, q, [{ id: 'big', body: 'y'.repeat(10), delay_ms: 3600000 }])
    await waitText(page, '#body', 'yyyyyyyyyy')
    assert.ok(reads.whole > w0, 'the new body was never read')
    assert.equal(await page.textContent('#facts dd:nth-of-type(6)'), '10 bytes')
    assert.deepEqual(errors, [])
    await page.close()
  })
})

describe('dashboard over a Redis Cluster (tests/cluster.sh)', () => {
  test('a sharded queue with a shard out of reach shows as unavailable, saying why, beside the other queues', async () => {
    const cluster = startCluster()
    let csrv
    try {
      csrv = await startServer(cluster.url)
      const [name, shards] = ['app:sharded', 16]
      execFileSync(process.env.REDELAY_BIN || '../../target/debug/redelay', [
        ...['--url', cluster.url, '--prefix', csrv.prefix, '--shards', String(shards)],
        ...['publish', name, 'x', '--id', 's1', '--delay', '1h'],
      ])
      // The master lost holds shards of the queue, but neither its shard count nor the
      // registry of names; the plain queue lives elsewhere.
      const spared = [cluster.masterOf(`x:{${name}}:meta`), cluster.masterOf(`${csrv.prefix}:queues`)]
      const owner = (i) => cluster.masterOf(`x:{${name}/${i}}:msg`)
      const owners = Array.from({ length: shards }, (_, i) => owner(i))
      const victim = owners.find((p) => !spared.includes(p))
      assert.ok(victim, 'a master with shards only')
      const first = owners.indexOf(victim)
      let plain = null
      for (let i = 0; !plain; i++) if (cluster.masterOf(`x:{app:plain${i}}:msg`) !== victim) plain = `app:plain${i}`
      await publish(csrv, plain, [{ body: 'x', delay_ms: 600000 }])
      await cluster.loseMaster(victim)

      const { page, errors } = await openDashboard(browser, csrv, ADMIN)
      await waitText(page, cell(plain, 'scheduled'), '1')
      await waitText(page, `${cell(name, 'state')} .badge`, 'unavailable')
      await page.waitForFunction(
        ([s, want]) => document.querySelector(s)?.textContent.includes(want),
        [cell(name, 'error'), `shard ${first} of queue "${name}" (hash tag {${name}/${first}})`],
      )
      assert.equal(await page.isVisible(cell(name, 'error')), true)
      assert.equal(await page.isVisible(cell(name, 'scheduled')), false, 'no count for it')
      assert.equal(await page.isVisible(cell(plain, 'error')), false)
      await waitText(page, '#overview-summary', '2 queues.')
      assert.deepEqual(errors, [])
      await page.close()
    } finally {
      await csrv?.stop()
      cluster.stop()
    }
  })
})
