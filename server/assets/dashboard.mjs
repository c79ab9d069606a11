// The dashboard of redelay serve: a plain ES module, no dependency, no build step. Every number
// comes from the native API (/v1, docs/server.md) with the token the page was given, kept in this
// tab's sessionStorage; the server decides what the token may see and do (a read-only token's
// actions are hidden here and refused there). Text from the API is only ever set as text, and
// stored data only through data() (below): isolated, its hidden characters shown.
/* global document, window, location, history */

const TOKEN_KEY = 'redelay.token'
const POLL_MS = 2000
const DEAD_POLL_MS = 10000
// A search (and each "Search further") goes on for at most this many steps of the API (about
// 500 records each) or until it has found this many more messages.
const SEARCH_MAX_STEPS = 40
const SEARCH_MAX_ITEMS = 200
// The overview's page of queues (the API gives at most 1000 a request).
const OVERVIEW_PAGE = 100
const LIST_LIMIT = 50
const SVG = 'http://www.w3.org/2000/svg'

const app = {
  token: sessionStorage.getItem(TOKEN_KEY),
  who: null,
  // Incremented at each navigation: answers for an older view are dropped.
  view: 0,
  timer: null,
  // A poll came due while the tab was hidden: none is made until it is shown again.
  asleep: false,
  lastOk: 0,
  // Redis' clock minus this browser's, from the last `now_ms` seen (null: none yet). Times the
  // page computes (the upcoming chart's start, the history's end, "in 5 min") use Redis' clock,
  // the one the server schedules by, not the browser's.
  skew: null,
}

/** Notes Redis' time `nowMs` of an answer just received. */
function noteNow(nowMs) {
  if (typeof nowMs === 'number') app.skew = nowMs - Date.now()
}
/** Now by Redis' clock (as last seen). */
const redisNow = () => Date.now() + (app.skew || 0)

// ---- small helpers -------------------------------------------------------------------------

/** An element: h('td', {class: 'num'}, 'text', child, ...). Attributes starting with "on" are listeners. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else if (k === 'dataset') Object.assign(el.dataset, v)
    // Through the CSSOM: the page's CSP allows no inline style attribute.
    else if (k === 'style') el.style.cssText = v
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue
    el.append(c instanceof Object && 'nodeType' in c ? c : document.createTextNode(String(c)))
  }
  return el
}

// ---- stored data in the page -----------------------------------------------------------------
// Ids, queue names, header names and values, errors and bodies come from whoever published or
// failed the messages. Shown as they are, a bidi control (U+202E…) in one would reorder the text
// around it (the dialog's own sentence) or disguise itself ("rtl-\u202Ecod.exe" showing as
// "rtl-exe.doc"); a zero-width or control character would hide. So data is only ever shown
// through data(): each such character as a visible, distinct escape (\u{202e}), the whole in a
// <bdi>, isolated from the text around it.

/** Bidi controls (U+061C, U+200E/F, U+202A–E, U+2066–9), zero-width and invisible characters,
 * line/paragraph separators and C0/C1 controls (with tab and newlines). */
const HIDDEN =
  // eslint-disable-next-line no-control-regex -- control characters are what it finds
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/gu
const escape = (c) => `\\u{${c.codePointAt(0).toString(16)}}`

/** The text of `v` with every hidden character escaped; `multiline` keeps tab, CR and LF. */
function shown(v, multiline = false) {
  return String(v).replace(HIDDEN, (c) => (multiline && (c === '\n' || c === '\t' || c === '\r') ? c : escape(c)))
}

/** Nodes showing `v`: its text, each hidden character as a marked escape. */
function dataNodes(v, multiline = false) {
  const s = String(v)
  const out = []
  let last = 0
  for (const m of s.matchAll(HIDDEN)) {
    if (multiline && (m[0] === '\n' || m[0] === '\t' || m[0] === '\r')) continue
    if (m.index > last) out.push(document.createTextNode(s.slice(last, m.index)))
    out.push(
      h(
        'span',
        { class: 'ctl', title: `U+${m[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}` },
        escape(m[0]),
      ),
    )
    last = m.index + m[0].length
  }
  if (last < s.length || !out.length) out.push(document.createTextNode(s.slice(last)))
  return out
}

/** A piece of stored data, isolated from the text around it: <bdi class="data">. */
const data = (v, attrs = {}) =>
  h('bdi', { ...attrs, class: `data${attrs.class ? ` ${attrs.class}` : ''}` }, dataNodes(v))

/** A sentence of the UI with data in it: ui`Cancel ${id}`; each value is shown by data() (a
 * number as it is, a nested ui`` or an array of them as their own parts). `nodes(line)` makes
 * fresh nodes of it (a plain string is UI text). */
const ui = (strings, ...values) => ({ strings, values })
const isLine = (v) => v !== null && typeof v === 'object' && Array.isArray(v.strings)
function nodes(line) {
  if (!isLine(line)) return [String(line)]
  const part = (v) =>
    isLine(v) ? nodes(v) : Array.isArray(v) ? v.flatMap(part) : typeof v === 'number' ? [String(v)] : [data(v)]
  const out = []
  line.strings.forEach((s, i) => {
    if (s) out.push(s)
    if (i < line.values.length) out.push(...part(line.values[i]))
  })
  return out
}

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  for (const c of children) el.append(typeof c === 'string' ? document.createTextNode(c) : c)
  return el
}

/** Sets an element's text only when it changed (no needless layout work). */
function setText(el, text) {
  const t = String(text)
  if (el.textContent !== t) el.textContent = t
}

const nf = new Intl.NumberFormat('en-US')
const num = (n) => (n === null || n === undefined ? '–' : nf.format(n))

function dur(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–'
  const neg = ms < 0
  let a = Math.abs(ms)
  let s
  if (a < 1000) s = `${Math.round(a)} ms`
  else if (a < 60000) s = `${(a / 1000).toFixed(1)} s`
  else if (a < 3600000) s = `${Math.floor(a / 60000)} min ${Math.floor((a % 60000) / 1000)} s`
  else if (a < 86400000) s = `${Math.floor(a / 3600000)} h ${Math.floor((a % 3600000) / 60000)} min`
  else {
    a = Math.floor(a / 3600000)
    s = `${Math.floor(a / 24)} d ${a % 24} h`
  }
  return neg ? `-${s}` : s
}

const pad = (n) => String(n).padStart(2, '0')
/** The browser's time zone at `ms`, as its offset: "UTC", "UTC+05:30", "UTC-08:00". */
function zone(ms) {
  const off = -new Date(ms).getTimezoneOffset()
  if (!off) return 'UTC'
  const a = Math.abs(off)
  return `UTC${off < 0 ? '-' : '+'}${pad(Math.floor(a / 60))}:${pad(a % 60)}`
}
/** A time in the browser's zone, always with the zone: "14:03:22 UTC+02:00". */
function clock(ms, withDate = false) {
  if (ms === null || ms === undefined) return '–'
  const d = new Date(ms)
  const t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zone(ms)}`
  return withDate ? `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${t}` : t
}
const hm = (ms) => {
  const d = new Date(ms)
  return `${pad(d.getHours())}:${pad(d.getMinutes())}`
}

const dayHm = (ms) => `${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][new Date(ms).getDay()]} ${hm(ms)}`

/** A UTC day, as the history's day points are: "2026-11-27". */
const utcDay = (ms) => new Date(ms).toISOString().slice(0, 10)

/** The history's ranges: how far back, by which step, and how its times are shown. */
const HISTORY_RANGES = {
  hour: { ms: 3600000, step: 'minute', span: 'Last hour, per minute', when: 'in the last hour', fmt: hm },
  days: { ms: 48 * 3600000, step: 'hour', span: 'Last 2 days, per hour', when: 'in the last 2 days', fmt: dayHm },
  months: {
    ms: 90 * 86400000,
    step: 'day',
    span: 'Last 90 days, per UTC day',
    when: 'in the last 90 days',
    fmt: utcDay,
  },
}

/** The upper bound of a lateness bucket (ms, exclusive), as the API gives it. */
function bound(b) {
  if (b === null || b === undefined) return '–'
  if (b === 'inf') return '≥ 16.4 s'
  return `< ${dur(b)}`
}

// A queue or message id may be "." or "..": encoded or not (even as %2E), a URL's path resolves
// such a segment away (fetch('/v1/queues/q/messages/..') would be DELETE /v1/queues/q, the
// queue's destroy). So api() refuses to send any path holding one (isDotSegment).
const seg = (s) => encodeURIComponent(s)
const isDotSegment = (s) => /^(\.|%2e){1,2}$/i.test(s)
const qpath = (queue) => `/v1/queues/${seg(queue)}`
const mpath = (queue, id) => `${qpath(queue)}/messages/${seg(id)}`
const queueHref = (queue) => `#/q/${encodeURIComponent(queue)}`
/** The overview's page (from 1) of the queues whose name contains `filter` (all when ''). */
const overviewHref = (page, filter = '') =>
  `#/${page > 1 ? `page/${page}` : ''}${filter ? `?contains=${encodeURIComponent(filter)}` : ''}`
const messageHref = (queue, id) => `#/q/${encodeURIComponent(queue)}/m/${encodeURIComponent(id)}`
const canWrite = () => app.who && !app.who.read_only

class ApiError extends Error {
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

/** One call of the native API with the token; a 401 asks for another token. */
async function api(method, path, body) {
  if (path.split('?')[0].split('/').some(isDotSegment))
    throw new ApiError(
      0,
      'DOT_SEGMENT',
      'a queue or message named “.” or “..” cannot be reached from a browser (a URL path resolves such a name away); use the CLI or a client library',
    )
  const headers = { authorization: `Bearer ${app.token}` }
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  } catch (e) {
    throw new ApiError(0, 'NETWORK', `the server cannot be reached (${e.message})`)
  }
  const data = await res.json().catch(() => null)
  if (res.status === 401) {
    signOut('The server refused this token (401). Give another one.')
    throw new ApiError(401, 'ERR_REDELAY_UNAUTHORIZED', 'token refused')
  }
  if (!res.ok) {
    const err = (data && data.error) || {}
    throw new ApiError(res.status, err.code || String(res.status), err.message || res.statusText)
  }
  app.lastOk = Date.now()
  return data
}

// ---- toast, confirm --------------------------------------------------------------------------

let toastTimer = null
/** Shows what an action did (or why it failed) for a few seconds; also kept in #result. */
function toast(text, bad = false) {
  const t = document.getElementById('toast')
  t.replaceChildren(...nodes(text))
  t.className = `toast show${bad ? ' bad' : ''}`
  clearTimeout(toastTimer)
  toastTimer = setTimeout(() => (t.className = 'toast'), 6000)
  const r = document.getElementById('result')
  if (r) {
    r.replaceChildren(...nodes(text))
    r.className = bad ? 'error' : 'muted'
  }
}

/** Asks to confirm an action in a modal dialog (Escape or Cancel: no); `title` and `text` are
 * strings or ui`` lines (their data isolated). */
function confirmAction(title, text, okLabel, extra) {
  const dlg = document.getElementById('confirm')
  document.getElementById('confirm-title').replaceChildren(...nodes(title))
  document.getElementById('confirm-text').replaceChildren(...nodes(text))
  document.getElementById('confirm-ok').textContent = okLabel
  document.getElementById('confirm-extra').replaceChildren(...(extra ? [extra] : []))
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), { once: true })
    dlg.returnValue = 'cancel'
    dlg.showModal()
    document.getElementById('confirm-cancel').focus()
  })
}

/** Buttons of which one is pressed (aria-pressed), each with `data-NAME=value`; a click presses
 * it and calls `onChange(value)`. */
function toggle(name, options, initial, onChange) {
  const buttons = options.map(([value, label]) =>
    h(
      'button',
      {
        type: 'button',
        'aria-pressed': String(value === initial),
        dataset: { [name]: value },
        onclick: () => {
          for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset[name] === value))
          onChange(value)
        },
      },
      label,
    ),
  )
  return buttons
}

/** An action button: checks its input (`check` throws to refuse, with its reason, before any
 * dialog), asks to confirm (with the fields of `extra`, a `{ el }`, in the dialog), runs `run`,
 * shows its report, then refreshes the view. */
function actionButton(label, { title, text, ok, danger = false, check, extra, run, after }) {
  return h(
    'button',
    {
      type: 'button',
      class: danger ? 'danger' : '',
      dataset: { action: label },
      onclick: async () => {
        try {
          if (check) check()
        } catch (e) {
          toast(ui`${title}: refused: ${e.message}`, true)
          return
        }
        const fields = extra && extra()
        if (!(await confirmAction(title, typeof text === 'function' ? text() : text, ok || label, fields?.el))) return
        try {
          const report = await run(fields)
          toast(report)
          if (after) after()
          else poll(true)
        } catch (e) {
          toast(ui`${title}: failed: ${e.message}`, true)
        }
      },
    },
    label,
  )
}

/** The expiry choice of a respawn, for the confirm dialog: `value()` is its part of the
 * request (nothing: each message keeps its own; `clear_expiry`; `expires_in_ms`), `says` how a
 * report tells it. */
function respawnExpiry(many = true) {
  const choice = h(
    'select',
    { id: 'respawn-expiry', 'aria-label': 'Expiry after the respawn' },
    h('option', { value: 'keep' }, many ? 'Each keeps its own expiry' : 'It keeps its own expiry'),
    h('option', { value: 'clear' }, 'Never expires'),
    h('option', { value: 'in' }, 'Expires in'),
  )
  const secs = h('input', {
    id: 'respawn-expiry-s',
    type: 'number',
    min: '1',
    step: '1',
    value: '3600',
    style: 'width:7em',
    'aria-label': 'Seconds after the respawn',
  })
  const unit = h('span', { class: 'muted' }, 's')
  const show = () => {
    secs.hidden = unit.hidden = choice.value !== 'in'
  }
  choice.addEventListener('change', show)
  show()
  return {
    el: h('p', { class: 'row' }, h('label', { for: 'respawn-expiry' }, 'Expiry'), choice, secs, unit),
    value: () => {
      if (choice.value === 'clear') return { clear_expiry: true }
      if (choice.value !== 'in') return {}
      const s = Number(secs.value)
      if (!secs.value || !Number.isFinite(s) || s < 1)
        throw new Error(`expiry: give a number of seconds, 1 or more (got “${secs.value}”)`)
      return { expires_in_ms: Math.round(s * 1000) }
    },
    says: () =>
      choice.value === 'clear'
        ? ', never to expire'
        : choice.value === 'in'
          ? `, expiring in ${dur(Number(secs.value) * 1000)}`
          : '',
  }
}

// ---- header, login, routing ------------------------------------------------------------------

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY)
  app.token = null
  app.who = null
  renderLogin(message)
}

function renderHeader(crumbs) {
  const who = document.getElementById('who')
  who.replaceChildren()
  if (app.who) {
    who.append(...(app.who.admin ? ['admin'] : ['namespace ', data(app.who.namespace)]), ' ')
    if (app.who.read_only) who.append(h('span', { class: 'badge ro', id: 'read-only-badge' }, 'read-only'))
  }
  document.getElementById('signout').hidden = !app.who
  const nav = document.getElementById('crumbs')
  nav.replaceChildren(...crumbs.flatMap((c, i) => (i ? [h('span', { 'aria-hidden': 'true' }, '›'), c] : [c])))
}

function renderLogin(message) {
  stopPolling()
  app.view++
  renderHeader([])
  const main = document.getElementById('main')
  const input = h('input', {
    id: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
    spellcheck: 'false',
    'aria-describedby': 'token-help',
  })
  const err = h('p', { class: 'error', role: 'alert', id: 'login-error' }, nodes(message || ''))
  const form = h(
    'form',
    {
      class: 'panel login',
      onsubmit: async (ev) => {
        ev.preventDefault()
        app.token = input.value.trim()
        try {
          app.who = await api('GET', '/v1/whoami')
          sessionStorage.setItem(TOKEN_KEY, app.token)
          route()
        } catch (e) {
          if (e.status !== 401) err.replaceChildren(...nodes(ui`Cannot sign in: ${e.message}`))
        }
      },
    },
    h('h1', {}, 'redelay dashboard'),
    h('label', { for: 'token' }, 'Token'),
    input,
    h(
      'p',
      { class: 'note', id: 'token-help' },
      'A namespace token, a read-only token or the admin token of this server. ',
      'It is kept in this browser tab only (sessionStorage) and sent with every API call.',
    ),
    h('button', { type: 'submit', class: 'primary', id: 'signin' }, 'Open the dashboard'),
    err,
  )
  main.replaceChildren(h('section', { class: 'login' }, form))
  input.focus()
}

function stopPolling() {
  clearTimeout(app.timer)
  app.timer = null
  app.asleep = false
}

/** The next poll, in POLL_MS: none while the tab is hidden (it comes when it is shown again). */
function pollLater() {
  app.timer = setTimeout(() => {
    app.timer = null
    if (document.visibilityState === 'hidden') app.asleep = true
    else poll(true)
  }, POLL_MS)
}

let current = null
/** Runs the current view's refresh now (`force`) or after POLL_MS, never two at once. */
async function poll(force = false) {
  stopPolling()
  const view = app.view
  if (!current) return
  if (!force) {
    pollLater()
    return
  }
  try {
    await current.refresh()
  } catch (e) {
    if (e.status === 401) return
    if (view === app.view) toast(ui`Update failed: ${e.message}`, true)
  }
  if (view === app.view) {
    const live = document.getElementById('live')
    const stale = Date.now() - app.lastOk > 3 * POLL_MS
    live.className = stale ? 'live stale' : 'live'
    setText(live, app.lastOk ? `${stale ? 'stale since' : 'updated'} ${clock(app.lastOk)}` : '')
    pollLater()
  }
}

async function route() {
  if (!app.token) return renderLogin()
  if (!app.who) {
    try {
      app.who = await api('GET', '/v1/whoami')
    } catch (e) {
      if (e.status !== 401) renderLogin(ui`Cannot sign in: ${e.message}`)
      return
    }
  }
  stopPolling()
  app.view++
  document.body.classList.toggle('read-only', !!app.who.read_only)
  const hash = location.hash.replace(/^#\/?/, '')
  const parts = hash.split('/').map(decodeURIComponent)
  const main = document.getElementById('main')
  if (parts[0] === 'q' && parts[1] && parts[2] === 'm' && parts[3]) current = messageView(parts[1], parts[3])
  else if (parts[0] === 'q' && parts[1]) current = queueView(parts[1])
  else {
    // The overview: `page/N`, then `?contains=TEXT` (its name filter), each optional.
    const [path, query = ''] = hash.split(/\?(.*)/s)
    const [first, n = ''] = path.split('/')
    const page = first === 'page' && /^[1-9]\d{0,8}$/.test(n) ? Number(n) : 1
    current = overviewView(page, new URLSearchParams(query).get('contains') || '')
  }
  renderHeader(current.crumbs)
  main.replaceChildren(current.el)
  document.title = `${shown(current.title)} · redelay`
  poll(true)
}

// ---- overview --------------------------------------------------------------------------------

const OVERVIEW_COLUMNS = [
  ['queue', 'Queue', '24%'],
  ['state', 'State', '8%'],
  ['scheduled', 'Scheduled', '8%'],
  ['ready', 'Ready', '7%'],
  ['leased', 'Leased', '7%'],
  ['dead', 'Dead', '7%'],
  ['per_minute', 'Delivered this minute', '9%'],
  ['p50', 'Lateness p50', '9%'],
  ['p99', 'Lateness p99', '9%'],
  ['oldest', 'Oldest due waiting', '12%'],
]

/** The overview's `page` (from 1): OVERVIEW_PAGE queues a page, in the order of their names;
 * with a `filter`, of the queues whose name contains it (the API's `contains`: either case). */
function overviewView(page, filter) {
  let offset = (page - 1) * OVERVIEW_PAGE
  // Typing a filter shows its first page at once: the address follows (replaced, not added to
  // the history), so a reload, a link or Back from a queue gives the same list.
  let typing = null
  const filterBox = h('input', {
    id: 'overview-filter',
    type: 'search',
    'aria-label': 'Filter queues by name',
    placeholder: 'Filter by name',
    size: 30,
    value: filter,
    oninput: () => {
      clearTimeout(typing)
      typing = setTimeout(() => {
        if (filterBox.value === filter) return
        filter = filterBox.value
        page = 1
        offset = 0
        pagerKey = ''
        history.replaceState(null, '', overviewHref(page, filter))
        poll(true)
      }, 250)
    },
  })
  const summary = h('p', { class: 'note', id: 'overview-summary' }, 'Loading…')
  // Registered names no client can open (`.`, `..`: stored before such names were refused).
  const unreachable = h('p', { class: 'note', id: 'overview-unreachable', hidden: true })
  const pager = h('nav', { class: 'row pager', id: 'overview-pager', 'aria-label': 'Pages of queues', hidden: true })
  const tbody = h('tbody')
  const table = h(
    'table',
    { id: 'queues', 'aria-describedby': 'overview-summary' },
    h('colgroup', {}, ...OVERVIEW_COLUMNS.map(([, , w]) => h('col', { style: `width:${w}` }))),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        OVERVIEW_COLUMNS.map(([k, label]) =>
          h('th', { scope: 'col', class: k === 'queue' || k === 'state' ? '' : 'num' }, label),
        ),
      ),
    ),
    tbody,
  )
  const rows = new Map()
  const el = h(
    'div',
    {},
    h('h1', {}, 'Queues'),
    h('section', { class: 'panel' }, h('div', { class: 'row' }, filterBox), summary, table, pager, unreachable),
    h(
      'p',
      { class: 'note' },
      'Lateness: how long after its due time a message was delivered, over the last hour (the bound of its bucket). ',
      'Oldest due waiting: how long the oldest due message has been waiting for a consumer.',
    ),
  )

  function row(name) {
    let r = rows.get(name)
    if (r) return r
    const cells = {}
    const tr = h('tr', { dataset: { queue: name } })
    for (const [k] of OVERVIEW_COLUMNS) {
      const td = h('td', { class: k === 'queue' || k === 'state' ? '' : 'num', dataset: { col: k } })
      if (k === 'queue') td.append(h('a', { href: queueHref(name) }, data(name)))
      cells[k] = td
      tr.append(td)
    }
    // In place of the counts while the queue's stats cannot be read: why.
    const problem = h('td', {
      class: 'problem',
      colspan: OVERVIEW_COLUMNS.length - 2,
      dataset: { col: 'error' },
      hidden: true,
    })
    tr.append(problem)
    // (`data` is the stored-data helper here; refresh() names its answer so.)
    const explain = (message) => problem.replaceChildren(...(message === null ? [] : [data(message)]))
    r = { tr, cells, problem, explain, error: null }
    rows.set(name, r)
    return r
  }

  /** Links to the first, previous, next and last pages (a link that would lead nowhere is
   * plain text); rebuilt only when the number of pages changes. */
  let pagerKey = ''
  function renderPager(pages) {
    const key = `${pages} ${page} ${filter}`
    if (key === pagerKey) return
    pagerKey = key
    pager.hidden = pages <= 1 && page === 1
    const link = (id, label, to, rel) =>
      to >= 1 && to !== page && (to < page || page < pages)
        ? h('a', { id, href: overviewHref(to, filter), rel }, label)
        : h('span', { id, class: 'muted', 'aria-disabled': 'true' }, label)
    pager.replaceChildren(
      link('overview-first', '« First', 1),
      link('overview-prev', '‹ Previous', Math.min(page - 1, pages), 'prev'),
      h('span', { id: 'overview-page' }, `Page ${num(page)} of ${num(pages)}`),
      link('overview-next', 'Next ›', page + 1, 'next'),
      link('overview-last', 'Last »', pages),
    )
  }

  async function refresh() {
    const view = app.view
    const asked = filter
    const contains = filter ? `&contains=${encodeURIComponent(filter)}` : ''
    const data = await api('GET', `/v1/overview?offset=${offset}&limit=${OVERVIEW_PAGE}${contains}`)
    // Dropped when another view is shown, or another filter typed meanwhile.
    if (view !== app.view || asked !== filter) return
    const read = data.queues.find((q) => q.stats)
    if (read) noteNow(read.stats.now_ms)
    const pages = Math.max(1, Math.ceil(data.total / OVERVIEW_PAGE))
    const matching = filter ? ` whose name contains “${shown(filter)}”` : ''
    // Never a silent cut: when not every queue is on this page, it says which ones are.
    setText(
      summary,
      data.total === 0
        ? filter
          ? `No queue${matching}.`
          : 'No queue yet (none has been published to, or none this token may see).'
        : !data.queues.length
          ? `No queue on page ${num(page)}: there are ${num(data.total)} queues${matching}, on ${num(pages)} page${pages === 1 ? '' : 's'}.`
          : data.queues.length === data.total
            ? `${num(data.total)} queue${data.total === 1 ? '' : 's'}${matching}.`
            : `Showing queues ${num(offset + 1)}–${num(offset + data.queues.length)} of ${num(data.total)}${matching}, by name.`,
    )
    renderPager(pages)
    const apart = data.unreachable || []
    unreachable.hidden = !apart.length
    setText(
      unreachable,
      apart.length
        ? `Not shown: ${apart.map((n) => `“${shown(n)}”`).join(', ')}, registered before such names were refused: no client can open ${apart.length === 1 ? 'it' : 'them'} (a URL resolves “.” and “..” away). See the gateway's documentation to remove ${apart.length === 1 ? 'it' : 'them'}.`
        : '',
    )
    const seen = new Set()
    data.queues.forEach((q, i) => {
      seen.add(q.queue)
      const r = row(q.queue)
      const { tr, cells } = r
      if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null)
      const state = cells.state
      // A queue whose stats failed (a shard out of reach): marked, with the server's message,
      // the other rows as usual.
      const error = q.error ? q.error.message : null
      if (r.error !== error) {
        r.error = error
        tr.classList.toggle('unavailable', error !== null)
        for (const [k] of OVERVIEW_COLUMNS) if (k !== 'queue' && k !== 'state') cells[k].hidden = error !== null
        r.problem.hidden = error === null
        r.explain(error)
      }
      if (error !== null) {
        if (state.dataset.v !== 'unavailable') {
          state.dataset.v = 'unavailable'
          state.replaceChildren(h('span', { class: 'badge unavailable', title: q.error.kind }, 'unavailable'))
        }
        return
      }
      const s = q.stats
      const paused = s.paused ? 'paused' : 'active'
      if (state.dataset.v !== paused) {
        state.dataset.v = paused
        state.replaceChildren(h('span', { class: `badge ${paused}` }, paused))
      }
      setText(cells.scheduled, num(s.scheduled))
      setText(cells.ready, num(s.ready))
      setLeased(cells.leased, s)
      setText(cells.dead, num(s.dead))
      setText(cells.per_minute, num(q.delivered_last_minute))
      const hour = q.last_hour ? q.last_hour.delivered : 0
      const title = `${num(hour)} delivered in the last hour`
      if (cells.per_minute.title !== title) cells.per_minute.title = title
      setText(cells.p50, bound(q.lateness_p50_below_ms))
      setText(cells.p99, bound(q.lateness_p99_below_ms))
      setText(cells.oldest, s.oldest_ready_due_ms === null ? '–' : dur(s.now_ms - s.oldest_ready_due_ms))
    })
    for (const [name, r] of rows) {
      if (!seen.has(name)) {
        r.tr.remove()
        rows.delete(name)
      }
    }
  }
  return { el, refresh, title: 'Queues', crumbs: [h('a', { href: '#/' }, 'Queues')] }
}

// ---- charts ----------------------------------------------------------------------------------

const H = 200
const PAD = { l: 44, r: 8, t: 10, b: 22 }

function niceMax(v) {
  if (v <= 5) return 5
  const p = 10 ** Math.floor(Math.log10(v))
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p
  return v
}

/** Grid lines at `ticks` ([fraction of the height, label]) and time labels under the x axis. */
function axes(el, ticks, labels) {
  const W = el.viewBox.baseVal.width
  const y0 = H - PAD.b
  for (const [f, text] of ticks) {
    const y = y0 - f * (y0 - PAD.t)
    el.append(svg('line', { class: 'axis', x1: PAD.l, x2: W - PAD.r, y1: y, y2: y }))
    el.append(svg('text', { x: PAD.l - 6, y: y + 4, 'text-anchor': 'end' }, text))
  }
  for (const [x, text, anchor] of labels) el.append(svg('text', { x, y: H - 6, 'text-anchor': anchor }, text))
}

const linearTicks = (max) => [0, 0.5, 1].map((f) => [f, num(max * f)])

/** Bars of counts per time bucket: [{at_ms, count}]. */
function drawBars(el, buckets, fmtTime, describe) {
  const max = niceMax(Math.max(0, ...buckets.map((b) => b.count)))
  const total = buckets.reduce((a, b) => a + b.count, 0)
  el.replaceChildren()
  el.dataset.total = String(total)
  el.setAttribute('aria-label', describe(total, buckets))
  const W = el.viewBox.baseVal.width
  const n = buckets.length || 1
  const bw = (W - PAD.l - PAD.r) / n
  const x = (i) => PAD.l + i * bw
  const last = buckets.length - 1
  axes(
    el,
    linearTicks(max),
    buckets.length
      ? [
          [x(0), fmtTime(buckets[0].at_ms), 'start'],
          [x(Math.floor(n / 2)), fmtTime(buckets[Math.floor(n / 2)].at_ms), 'middle'],
          [W - PAD.r, fmtTime(buckets[last].at_ms), 'end'],
        ]
      : [],
  )
  const y0 = H - PAD.b
  buckets.forEach((b, i) => {
    if (!b.count) return
    const hgt = Math.max(1, (b.count / max) * (y0 - PAD.t))
    el.append(
      svg(
        'rect',
        { class: 'bar', x: x(i) + 0.5, y: y0 - hgt, width: Math.max(1, bw - 1), height: hgt, 'data-count': b.count },
        svg('title', {}, `${fmtTime(b.at_ms)}: ${num(b.count)}`),
      ),
    )
  })
}

/** Lines of several series over the same points: series [{key, label, cls, value(p)}]. */
function drawLines(el, points, series, { max: fixedMax, ticks, yOf, dots = false, fmtTime = hm } = {}) {
  el.replaceChildren()
  const W = el.viewBox.baseVal.width
  const vals = points.flatMap((p) => series.map((s) => s.value(p))).filter((v) => v !== null)
  const max = fixedMax || niceMax(Math.max(0, ...vals))
  const y0 = H - PAD.b
  const n = Math.max(1, points.length - 1)
  const x = (i) => PAD.l + (i / n) * (W - PAD.l - PAD.r)
  const y = (v) => y0 - (yOf ? yOf(v) : v / max) * (y0 - PAD.t)
  axes(
    el,
    ticks || linearTicks(max),
    points.length
      ? [
          [x(0), fmtTime(points[0].at_ms), 'start'],
          [W - PAD.r, fmtTime(points[points.length - 1].at_ms), 'end'],
        ]
      : [],
  )
  for (const s of series) {
    let d = ''
    points.forEach((p, i) => {
      const v = s.value(p)
      if (v === null) return
      d += `${d ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`
    })
    if (d) el.append(svg('path', { class: `line ${s.cls}`, d }, svg('title', {}, s.label)))
    if (dots) {
      points.forEach((p, i) => {
        const v = s.value(p)
        if (v === null) return
        el.append(
          svg(
            'circle',
            { class: `dot ${s.cls}`, cx: x(i), cy: y(v), r: 3 },
            svg('title', {}, `${fmtTime(p.at_ms)} ${s.label}`),
          ),
        )
      })
    }
  }
  const sums = series.map((s) => `${s.label} ${num(points.reduce((a, p) => a + (s.value(p) || 0), 0))}`)
  el.dataset.sums = JSON.stringify(
    Object.fromEntries(series.map((s) => [s.key, points.reduce((a, p) => a + (s.value(p) || 0), 0)])),
  )
  return sums
}

function legend(series) {
  return h(
    'div',
    { class: 'legend', 'aria-hidden': 'true' },
    series.map((s) => h('span', {}, h('i', { class: s.cls }), s.label)),
  )
}

/** An SVG chart `width` units wide (text keeps its proportions: the chart scales as a whole). */
function chartSvg(id, label, width) {
  const el = svg('svg', { class: 'chart', id, viewBox: `0 0 ${width} ${H}`, role: 'img' })
  el.setAttribute('aria-label', label)
  return el
}

// ---- queue page ------------------------------------------------------------------------------

/** A panel: a section titled `title` (its heading's id `id`), `tools` beside the title. */
function panel(id, title, tools, ...children) {
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': id },
    h('div', { class: 'row' }, h('h2', { id }, title), h('span', { class: 'spacer' }), tools),
    ...children,
  )
}

/** Leased messages, with those whose lease ran out (their consumer is gone) named apart. */
function setLeased(el, s) {
  setText(el, s.lapsed ? `${num(s.leased)} (${num(s.lapsed)} lapsed)` : num(s.leased))
  el.classList.toggle('warn', s.lapsed > 0)
  const title = s.lapsed
    ? `${num(s.lapsed)} of them past their lease: their consumer is gone, and the next fetch takes them back as a failed attempt`
    : ''
  if (el.title !== title) el.title = title
}

function card(key, label) {
  const v = h('div', { class: 'v', dataset: { stat: key } }, '–')
  return { el: h('div', { class: 'card' }, h('div', { class: 'k' }, label), v), v }
}

const MSG_COLUMNS = [
  ['id', 'Id', '28%'],
  ['state', 'State', '10%'],
  ['due', 'Due', '17%'],
  ['attempts', 'Attempts', '9%'],
  ['error', 'Last error', '36%'],
]

function messageTable(queue, items, id) {
  if (!items.length) return h('p', { class: 'empty', id }, 'No message.')
  return h(
    'table',
    { id },
    h(
      'colgroup',
      {},
      MSG_COLUMNS.map(([, , w]) => h('col', { style: `width:${w}` })),
    ),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        MSG_COLUMNS.map(([k, l]) => h('th', { scope: 'col', class: k === 'attempts' ? 'num' : '' }, l)),
      ),
    ),
    h(
      'tbody',
      {},
      items.map((m) =>
        h(
          'tr',
          { dataset: { id: m.id } },
          h('td', { class: 'mono' }, h('a', { href: messageHref(queue, m.id) }, data(m.id))),
          h('td', {}, data(m.state)),
          h('td', { class: 'num', title: clock(m.due_at_ms, true) }, clock(m.due_at_ms, true)),
          h('td', { class: 'num' }, `${m.attempts} / ${m.max_attempts}`),
          h('td', { title: shown(m.last_error || '') }, m.last_error ? data(m.last_error) : ''),
        ),
      ),
    ),
  )
}

const THROUGHPUT = [
  { key: 'published', label: 'published', cls: 's1', value: (p) => p.published },
  { key: 'delivered', label: 'delivered', cls: 's2', value: (p) => p.delivered },
  { key: 'acked', label: 'acked', cls: 's3', value: (p) => p.acked },
  { key: 'dead', label: 'dead', cls: 's4', value: (p) => p.dead },
]
// Lateness bounds are powers of two from 1 ms to 16,384 ms ("inf" above): a log scale.
const latencyValue = (b) => (b === null || b === undefined ? null : b === 'inf' ? 32768 : b)
const LATENESS = [
  { key: 'p50', label: 'p50', cls: 's1', value: (p) => latencyValue(p.lateness_p50_below_ms) },
  { key: 'p99', label: 'p99', cls: 's4', value: (p) => latencyValue(p.lateness_p99_below_ms) },
]

function queueView(queue) {
  const base = qpath(queue)
  const cards = {
    scheduled: card('scheduled', 'Scheduled'),
    ready: card('ready', 'Ready'),
    leased: card('leased', 'Leased'),
    dead: card('dead', 'Dead'),
    next: card('next', 'Next due in'),
    oldest: card('oldest', 'Oldest due waiting'),
  }
  const state = h('span', { id: 'queue-state' })
  const pauseBox = h('span', { class: 'row' })
  let paused = null

  // Upcoming: per minute for the next hour, or per hour for the next 3 days.
  let upcomingMode = 'hour'
  const upSvg = chartSvg('upcoming', 'Messages falling due', 1240)
  const upNote = h('p', { class: 'note', id: 'upcoming-note' }, '')
  const modeButtons = toggle(
    'mode',
    [
      ['hour', 'Next hour, per minute'],
      ['days', 'Next 3 days, per hour'],
    ],
    upcomingMode,
    (mode) => {
      upcomingMode = mode
      refreshUpcoming()
    },
  )

  // History: the last hour per minute, the last 2 days per hour, or the last 90 days per day.
  let historyRange = 'hour'
  const rangeButtons = toggle(
    'range',
    Object.entries(HISTORY_RANGES).map(([k, r]) => [k, r.span]),
    historyRange,
    (range) => {
      historyRange = range
      refreshHistory()
    },
  )
  const tpSvg = chartSvg('throughput', 'Throughput per minute over the last hour', 600)
  const tpNote = h('p', { class: 'note', id: 'throughput-note' })
  const latSvg = chartSvg('lateness', 'Lateness per minute over the last hour', 600)
  const latNote = h('p', { class: 'note', id: 'lateness-note' })

  // Dead letters grouped by error.
  const deadBox = h('div', { id: 'dead-groups' }, h('p', { class: 'empty' }, 'Loading…'))
  const deadNote = h('p', { class: 'note', id: 'dead-note' })
  const deadAll = h('div', { class: 'row' })
  let deadAt = 0

  // Messages by state, and search.
  const listBox = h('div', { id: 'list-box' })
  const listState = h(
    'select',
    { id: 'list-state', 'aria-label': 'State', onchange: () => refreshList() },
    ['scheduled', 'ready', 'leased', 'dead'].map((s) => h('option', { value: s }, s)),
  )
  const listNote = h('span', { class: 'note', id: 'list-note' })
  const searchKind = h(
    'select',
    { id: 'search-kind', 'aria-label': 'Search by' },
    [
      ['id_prefix', 'id prefix'],
      ['header', 'header NAME:VALUE'],
      ['body', 'body text'],
      ['error', 'last error'],
    ].map(([v, l]) => h('option', { value: v }, l)),
  )
  const searchText = h('input', {
    id: 'search-text',
    type: 'search',
    'aria-label': 'Search for',
    required: true,
    size: 30,
  })
  const searchNote = h('p', { class: 'note', id: 'search-note', 'aria-live': 'polite', tabindex: '-1' })
  const searchBox = h('div', { id: 'search-results' })
  const searchMore = h(
    'button',
    { type: 'button', id: 'search-more', hidden: true, onclick: () => search && searchSteps(search) },
    'Search further',
  )
  // The search shown: its query, what it found (by id, so no message twice), how many records
  // it scanned, the cursor it stopped at (null: not started, or `done`) and how many runs of
  // steps it made. A new search replaces it; the steps of one replaced (or of another page)
  // are dropped.
  let search = null
  const result = h('p', { id: 'result', class: 'muted', 'aria-live': 'polite' })
  const readOnlyNote = canWrite()
    ? null
    : h('p', { class: 'note', id: 'read-only-note' }, 'This token is read-only: actions are not available.')

  const el = h(
    'div',
    {},
    h('h1', {}, data(queue, { class: 'mono' }), state, pauseBox),
    readOnlyNote,
    result,
    h(
      'div',
      { class: 'cards' },
      Object.values(cards).map((c) => c.el),
    ),
    panel('h-upcoming', 'Upcoming: messages falling due', modeButtons, upSvg, upNote),
    h(
      'div',
      { class: 'grid2' },
      panel('h-tp', 'Throughput', rangeButtons, tpSvg, legend(THROUGHPUT), tpNote),
      panel('h-lat', 'Lateness (p50, p99)', null, latSvg, legend(LATENESS), latNote),
    ),
    panel('h-dead', 'Dead letters by error', deadAll, deadNote, deadBox),
    panel(
      'h-search',
      'Search',
      null,
      h(
        'form',
        {
          class: 'row',
          id: 'search-form',
          onsubmit: (ev) => {
            ev.preventDefault()
            runSearch()
          },
        },
        searchKind,
        searchText,
        h('button', { type: 'submit', class: 'primary', id: 'search-go' }, 'Search'),
      ),
      searchNote,
      searchBox,
      h('p', { class: 'row' }, searchMore),
    ),
    panel(
      'h-list',
      'Messages',
      [listState, h('button', { type: 'button', onclick: () => refreshList() }, 'Refresh'), listNote],
      listBox,
    ),
  )

  async function refreshStats() {
    const s = await api('GET', `${base}/stats`)
    noteNow(s.now_ms)
    for (const k of ['scheduled', 'ready', 'dead']) setText(cards[k].v, num(s[k]))
    setLeased(cards.leased.v, s)
    setText(cards.next.v, s.next_due_ms === null ? '–' : dur(Math.max(0, s.next_due_ms - s.now_ms)))
    setText(cards.oldest.v, s.oldest_ready_due_ms === null ? '–' : dur(s.now_ms - s.oldest_ready_due_ms))
    if (paused !== s.paused) {
      paused = s.paused
      state.replaceChildren(h('span', { class: `badge ${paused ? 'paused' : 'active'}` }, paused ? 'paused' : 'active'))
      pauseBox.replaceChildren()
      if (canWrite()) {
        pauseBox.append(
          paused
            ? actionButton('Resume', {
                title: ui`Resume ${queue}`,
                text: 'Consumers receive its due messages again.',
                run: async () => {
                  const r = await api('POST', `${base}/resume`)
                  return r.changed ? ui`Resumed ${queue}.` : ui`${queue} was not paused.`
                },
              })
            : actionButton('Pause', {
                title: ui`Pause ${queue}`,
                text: 'Consumers receive nothing from this queue until it is resumed; publishing goes on.',
                danger: true,
                run: async () => {
                  const r = await api('POST', `${base}/pause`)
                  return r.changed ? ui`Paused ${queue}.` : ui`${queue} was paused already.`
                },
              }),
        )
      }
    }
  }

  async function refreshUpcoming() {
    const view = app.view
    const days = upcomingMode === 'days'
    const width = days ? 3600000 : 60000
    const n = days ? 72 : 60
    // Buckets start on a whole minute/hour, the first one holding what is overdue in it.
    const from = Math.floor(redisNow() / width) * width
    const u = await api('GET', `${base}/upcoming?from_ms=${from}&width_ms=${width}&buckets=${n}`)
    if (view !== app.view) return
    const fmt = days ? dayHm : hm
    drawBars(upSvg, u.buckets, fmt, (total, b) => {
      const top = b.reduce((a, x) => (x.count > a.count ? x : a), { count: 0 })
      return `${num(total)} message${total === 1 ? '' : 's'} ${total === 1 ? 'falls' : 'fall'} due ${days ? 'in the next 3 days' : 'in the next hour'}${top.count ? `; most at ${fmt(top.at_ms)} (${top.count})` : ''}`
    })
    setText(upNote, `${upSvg.getAttribute('aria-label')}. Times in ${zone(from)}.`)
  }

  async function refreshHistory() {
    const view = app.view
    const { ms, step, span, when, fmt: fmtTime } = HISTORY_RANGES[historyRange]
    const until = redisNow()
    const hist = await api('GET', `${base}/history?step=${step}&since_ms=${until - ms}&until_ms=${until}`)
    if (view !== app.view) return
    const sums = drawLines(tpSvg, hist.points, THROUGHPUT, { fmtTime })
    tpSvg.setAttribute('aria-label', `Throughput. ${span}: ${sums.join(', ')}`)
    setText(
      tpNote,
      `${span}: ${sums.join(', ')}. ${step === 'day' ? 'Days' : 'Times'} in ${step === 'day' ? 'UTC' : zone(until)}.`,
    )
    latSvg.setAttribute('aria-label', `Lateness p50 and p99. ${span}.`)
    drawLines(latSvg, hist.points, LATENESS, {
      fmtTime,
      max: 32768,
      dots: true,
      yOf: (v) => Math.log2(Math.max(1, v)) / 15,
      ticks: [
        [0, '1 ms'],
        [5 / 15, '32 ms'],
        [10 / 15, '1 s'],
        [1, '≥16 s'],
      ],
    })
    const n = hist.points.reduce((a, p) => a + p.delivered, 0)
    setText(latNote, n ? `${num(n)} deliveries ${when}.` : `No delivery ${when}.`)
  }

  async function refreshDead(force = false) {
    if (!force && Date.now() - deadAt < DEAD_POLL_MS) return
    deadAt = Date.now()
    const view = app.view
    const d = await api('GET', `${base}/dead/errors`)
    if (view !== app.view) return
    setText(
      deadNote,
      d.total === 0
        ? 'No dead letter.'
        : `${num(d.total)} dead letters${d.scanned < d.total ? ` (the first ${num(d.scanned)} grouped)` : ''}.`,
    )
    deadAll.replaceChildren()
    if (canWrite() && d.total > 0) {
      deadAll.append(
        actionButton('Respawn all', {
          title: ui`Respawn every dead letter of ${queue}`,
          text: `${num(d.total)} dead letters get their attempts back and are due now.`,
          extra: respawnExpiry,
          run: async (x) =>
            `Respawned ${num((await api('POST', `${base}/dead/respawn`, { all: true, ...x.value() })).count)} dead letters${x.says()}.`,
          after: () => refreshAll(),
        }),
        actionButton('Purge all', {
          title: ui`Purge every dead letter of ${queue}`,
          text: `${num(d.total)} dead letters are deleted for good.`,
          danger: true,
          run: async () =>
            `Purged ${num((await api('POST', `${base}/dead/purge`, { all: true })).count)} dead letters.`,
          after: () => refreshAll(),
        }),
      )
    }
    if (!d.groups.length) {
      deadBox.replaceChildren()
      return
    }
    const bulk = (action, g) => async (x) => {
      const r = await api('POST', `${base}/bulk`, { action, search: { error: g.error }, ...x?.value() })
      const verb = action === 'respawn' ? 'Respawned' : 'Purged'
      return ui`${verb} ${num(r.done)} of ${num(r.matched)} messages whose last error contains “${g.error}”${x ? x.says() : ''} (${num(r.scanned)} records scanned).`
    }
    // The search is a substring match: a group's action takes in every group whose error contains
    // its text ("timeout" takes "upstream timeout" too); the dialog says so, naming them.
    const matches = (g) => {
      const more = d.groups.filter((o) => o !== g && o.error.includes(g.error))
      const also = more.length
        ? ui`, and also those of ${more.length === 1 ? 'the group' : `${more.length} more groups`} ${more.map((o, i) => ui`${i ? ', ' : ''}“${o.error}” (${num(o.count)})`)}`
        : ''
      return ui`this group's ${num(g.count)}${also}${d.scanned < d.total ? ', and any among the dead letters not grouped here' : ''}`
    }
    deadBox.replaceChildren(
      h(
        'table',
        { id: 'dead-table' },
        h(
          'colgroup',
          {},
          ['40%', '9%', '17%', '18%', '16%'].map((w) => h('col', { style: `width:${w}` })),
        ),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Error'),
            h('th', { scope: 'col', class: 'num' }, 'Count'),
            h('th', { scope: 'col', class: 'num' }, 'Last died'),
            h('th', { scope: 'col' }, 'Examples'),
            h('th', { scope: 'col' }, canWrite() ? 'Actions' : ''),
          ),
        ),
        h(
          'tbody',
          {},
          d.groups.map((g) =>
            h(
              'tr',
              { dataset: { error: g.error } },
              h('td', { class: 'wrap' }, g.error ? data(g.error) : h('span', { class: 'muted' }, '(no error given)')),
              h('td', { class: 'num' }, num(g.count)),
              h('td', { class: 'num' }, clock(g.last_died_at_ms, true)),
              h(
                'td',
                { class: 'wrap' },
                g.sample_ids.flatMap((id, i) => [
                  i ? ', ' : '',
                  h('a', { href: messageHref(queue, id), class: 'mono' }, data(id)),
                ]),
              ),
              h(
                'td',
                {},
                canWrite() && g.error
                  ? h(
                      'div',
                      { class: 'row' },
                      actionButton('Respawn', {
                        title: ui`Respawn every dead letter whose last error contains “${g.error}”`,
                        text: ui`Every dead letter whose last error contains “${g.error}” gets its attempts back and is due now: ${matches(g)}.`,
                        extra: respawnExpiry,
                        run: bulk('respawn', g),
                        after: () => refreshAll(),
                      }),
                      actionButton('Purge', {
                        title: ui`Purge every dead letter whose last error contains “${g.error}”`,
                        text: ui`Every dead letter whose last error contains “${g.error}” is deleted for good: ${matches(g)}.`,
                        danger: true,
                        run: bulk('purge', g),
                        after: () => refreshAll(),
                      }),
                    )
                  : null,
              ),
            ),
          ),
        ),
      ),
    )
  }

  async function refreshList() {
    const view = app.view
    const s = listState.value
    const page = await api('GET', `${base}/messages?state=${s}&limit=${LIST_LIMIT}`)
    if (view !== app.view) return
    setText(
      listNote,
      `${num(page.total)} ${s}${page.total > page.items.length ? `, the first ${page.items.length} shown` : ''}`,
    )
    listBox.replaceChildren(messageTable(queue, page.items, 'list-table'))
  }

  function runSearch() {
    const kind = searchKind.value
    const text = searchText.value
    if (!text) return
    search = null
    searchMore.hidden = true
    searchBox.replaceChildren()
    if (kind === 'header' && !text.includes(':')) {
      setText(searchNote, 'A header search is NAME:VALUE.')
      return
    }
    search = {
      kind,
      text,
      found: new Map(),
      scanned: 0,
      cursor: null,
      done: false,
      running: false,
      runs: 0,
      error: null,
    }
    return searchSteps(search)
  }

  /** Runs search `s` on from where it stopped, for SEARCH_MAX_STEPS steps at most or until it
   * has found SEARCH_MAX_ITEMS more messages, adding them to those shown. */
  async function searchSteps(s) {
    if (s.running || s.done) return
    const view = app.view
    const wanted = s.found.size + SEARCH_MAX_ITEMS
    let steps = 0
    s.running = true
    s.error = null
    showSearch(s, false)
    try {
      do {
        const q = new URLSearchParams({ [s.kind]: s.text })
        if (s.cursor) q.set('cursor', s.cursor)
        const page = await api('GET', `${base}/search?${q}`)
        if (view !== app.view || s !== search) return
        s.scanned += page.scanned
        for (const m of page.items) s.found.set(m.id, m)
        s.cursor = page.cursor
        s.done = !page.cursor
        steps++
        if (!s.done && steps < SEARCH_MAX_STEPS && s.found.size < wanted) showSearch(s, false)
      } while (!s.done && steps < SEARCH_MAX_STEPS && s.found.size < wanted)
    } catch (e) {
      if (view !== app.view || s !== search) return
      s.error = e.message
    }
    s.running = false
    s.runs++
    showSearch(s, true)
  }

  /** The note, the button and (at the end of a run, `table`) the results of search `s`. */
  function showSearch(s, table) {
    const n = s.found.size
    const counts = `${num(n)} found, ${num(s.scanned)} records scanned`
    const more = !s.done && s.cursor !== null
    if (s.running)
      setText(
        searchNote,
        s.scanned ? `Searching… ${num(n)} matching so far, ${num(s.scanned)} records scanned.` : 'Searching…',
      )
    else if (s.error)
      searchNote.replaceChildren(
        ...nodes(s.scanned ? ui`${counts}; then the search failed: ${s.error}` : ui`Search failed: ${s.error}`),
      )
    else setText(searchNote, `${counts}${more ? ' (stopped before the end of the queue)' : ''}.`)
    // Shown once a run stopped before the end; during the next run, shown but inactive (it keeps
    // the focus).
    searchMore.setAttribute('aria-disabled', String(s.running))
    if (!more && searchMore === document.activeElement) searchNote.focus()
    searchMore.hidden = !more || !s.runs
    if (table) searchBox.replaceChildren(messageTable(queue, [...s.found.values()], 'search-table'))
  }

  function refreshAll() {
    deadAt = 0
    poll(true)
    refreshList().catch(() => {})
  }

  async function refresh() {
    // Redis' time first when none is known yet: the charts' ranges are computed from it.
    const stats = refreshStats()
    if (app.skew === null) await stats
    await Promise.all([stats, refreshUpcoming(), refreshHistory(), refreshDead()])
  }
  refreshList().catch((e) => toast(ui`Messages: ${e.message}`, true))
  return {
    el,
    refresh,
    title: queue,
    crumbs: [h('a', { href: '#/' }, 'Queues'), h('a', { href: queueHref(queue), class: 'mono' }, data(queue))],
  }
}

// ---- message detail --------------------------------------------------------------------------

function hexDump(b64) {
  const bin = atob(b64)
  const lines = []
  for (let o = 0; o < bin.length; o += 16) {
    const chunk = bin.slice(o, o + 16)
    const hex = [...chunk].map((c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join(' ')
    const txt = [...chunk].map((c) => (c.charCodeAt(0) >= 32 && c.charCodeAt(0) < 127 ? c : '.')).join('')
    lines.push(`${o.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${txt}`)
  }
  return lines.join('\n') || '(empty)'
}

function bodyAs(m, mode) {
  if (mode === 'hex') return hexDump(m.body_base64)
  if (m.body === null) return '(not UTF-8 text: see hex)'
  if (mode === 'json') {
    try {
      return JSON.stringify(JSON.parse(m.body), null, 2)
    } catch (e) {
      return `(not JSON: ${e.message})`
    }
  }
  return m.body || '(empty)'
}

function messageView(queue, id) {
  const base = mpath(queue, id)
  const facts = h('dl', { class: 'facts', id: 'facts' })
  const timeline = h('ol', { class: 'timeline', id: 'timeline' })
  const headers = h('div', { id: 'headers' })
  const pre = h('pre', { class: 'body', id: 'body', tabindex: '0' })
  const actions = h('div', { class: 'row', id: 'actions' })
  const result = h('p', { id: 'result', class: 'muted', 'aria-live': 'polite' })
  let mode = null
  let msg = null
  let shownKey = ''
  // Polls read the message without its body (`?body=false`); the body is read when the message
  // is first shown and again only when it was published anew (another publish time or size).
  let bodyKey = ''
  const bodyKeyOf = (m, bytes) => `${m.published_at_ms}/${bytes}`
  const modes = toggle(
    'mode',
    [
      ['text', 'Text'],
      ['json', 'JSON'],
      ['hex', 'Hex'],
    ],
    null,
    (m) => {
      mode = m
      showBody()
    },
  )
  function showBody() {
    for (const b of modes) b.setAttribute('aria-pressed', String(b.dataset.mode === mode))
    // The body alone in its block; tab and newlines kept, every other hidden character shown.
    pre.replaceChildren(...dataNodes(bodyAs(msg, mode), true))
  }
  const delay = h('input', {
    id: 'reschedule-s',
    type: 'number',
    min: '0',
    step: '1',
    value: '60',
    size: 6,
    required: true,
    'aria-label': 'Seconds from now',
  })
  /** The reschedule's delay: an empty field is not 0 (that would deliver at once), so a
   * missing, non-numeric or negative value is refused. */
  const delayMs = () => {
    const v = delay.value.trim()
    const s = Number(v)
    if (!v || !Number.isFinite(s) || s < 0)
      throw new Error(`give a number of seconds, 0 or more (got “${delay.value}”)`)
    return Math.round(s * 1000)
  }
  const el = h(
    'div',
    {},
    h('h1', {}, 'Message ', data(id, { class: 'mono' })),
    result,
    h(
      'div',
      { class: 'grid2' },
      panel('h-facts', 'Facts', null, facts),
      panel('h-timeline', 'Timeline', null, timeline),
    ),
    panel('h-actions', 'Actions', null, actions),
    panel('h-headers', 'Headers', null, headers),
    panel('h-body', 'Body', modes, pre),
  )
  const back = () => {
    location.hash = queueHref(queue)
  }

  function renderActions(m) {
    if (!canWrite()) {
      actions.replaceChildren(
        h('p', { class: 'note', id: 'read-only-note' }, 'This token is read-only: actions are not available.'),
      )
      return
    }
    const list = []
    if (m.state === 'scheduled' || m.state === 'ready') {
      list.push(
        actionButton('Deliver now', {
          title: ui`Deliver ${id} now`,
          text: 'It becomes due now: the next consumer gets it.',
          run: async () =>
            ui`${id} is due now (due at ${clock((await api('POST', `${base}/reschedule`, { delay_ms: 0 })).due_at_ms)}).`,
          after: () => poll(true),
        }),
        h(
          'span',
          { class: 'row' },
          h('label', { for: 'reschedule-s' }, 'in'),
          delay,
          h('span', { class: 'muted' }, 's'),
        ),
        actionButton('Reschedule', {
          title: ui`Reschedule ${id}`,
          check: delayMs,
          text: () => `It becomes due ${dur(delayMs())} from now.`,
          run: async () => {
            const r = await api('POST', `${base}/reschedule`, { delay_ms: delayMs() })
            return ui`${id} rescheduled: due at ${clock(r.due_at_ms, true)}.`
          },
          after: () => poll(true),
        }),
      )
    }
    if (m.state === 'dead') {
      list.push(
        actionButton('Respawn', {
          title: ui`Respawn ${id}`,
          text: 'It gets its attempts back and is due now.',
          extra: () => respawnExpiry(false),
          run: async (x) => {
            const r = await api('POST', `${qpath(queue)}/dead/respawn`, { ids: [id], ...x.value() })
            return r.count ? ui`${id} respawned: due now${x.says()}.` : ui`${id} was not dead any more: nothing done.`
          },
          after: () => poll(true),
        }),
      )
    }
    list.push(
      actionButton('Cancel', {
        title: ui`Cancel ${id}`,
        text: 'The message is deleted, wherever it is; a consumer holding it loses its lease.',
        danger: true,
        run: async () => {
          await api('DELETE', base)
          return ui`${id} cancelled (deleted).`
        },
        after: back,
      }),
    )
    if (m.state === 'leased')
      list.unshift(
        h('span', { class: 'note' }, 'Leased: a consumer holds it until it is settled or its lease runs out.'),
      )
    actions.replaceChildren(...list)
  }

  /** The timeline, its relative times by Redis' clock now. */
  function showTimeline(m) {
    const now = redisNow()
    const events = [
      ['published', m.published_at_ms],
      ['due', m.due_at_ms],
      ['lease runs out', m.lease_deadline_ms],
      ['died', m.died_at_ms],
      ['expires', m.expires_at_ms],
    ]
      .filter(([, t]) => t !== null && t !== undefined)
      .sort((a, b) => a[1] - b[1])
    timeline.replaceChildren(
      ...events.map(([what, t]) =>
        h(
          'li',
          { class: t > now ? 'future' : '' },
          `${clock(t, true)} — ${what} (${t > now ? 'in ' : ''}${dur(Math.abs(now - t))}${t > now ? '' : ' ago'})`,
        ),
      ),
    )
  }

  async function refresh() {
    const view = app.view
    let m
    try {
      const [lean, s] = await Promise.all([api('GET', `${base}?body=false`), api('GET', `${qpath(queue)}/stats`)])
      noteNow(s.now_ms)
      const { body_bytes: bytes, ...rest } = lean
      if (msg && bodyKeyOf(lean, bytes) === bodyKey) m = { ...rest, body: msg.body, body_base64: msg.body_base64 }
      else {
        m = await api('GET', base)
        // The size from the base64 (without decoding several MiB).
        const b64 = m.body_base64 || ''
        bodyKey = bodyKeyOf(m, (b64.length / 4) * 3 - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0))
      }
    } catch (e) {
      if (e.status === 404 && view === app.view) {
        msg = null
        shownKey = ''
        bodyKey = ''
        facts.replaceChildren(
          h('dt', {}, 'State'),
          h('dd', { id: 'gone' }, 'gone: no message with this id (acked, cancelled or purged)'),
        )
        timeline.replaceChildren()
        actions.replaceChildren()
        return
      }
      throw e
    }
    if (view !== app.view) return
    const bodyBytes = Number(bodyKey.split('/')[1])
    // The timeline's relative times move at every refresh; the rest only when the message changes.
    showTimeline(m)
    const key = JSON.stringify(m)
    if (key === shownKey) return
    shownKey = key
    msg = m
    facts.replaceChildren(
      ...[
        ['State', h('span', { class: `badge ${m.state === 'dead' ? 'dead' : ''}`, id: 'msg-state' }, m.state)],
        ['Queue', h('a', { href: queueHref(queue), class: 'mono' }, data(queue))],
        ['Attempts', `${m.attempts} failed of ${m.max_attempts} allowed`],
        ['Lease (ttr)', dur(m.ttr_ms)],
        ['Last error', m.last_error ? data(m.last_error) : '–'],
        ['Body size', `${num(bodyBytes)} bytes`],
      ].flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    )
    const hs = Object.entries(m.headers || {})
    headers.replaceChildren(
      hs.length
        ? h(
            'table',
            {},
            h(
              'tbody',
              {},
              hs.map(([k, v]) =>
                h(
                  'tr',
                  {},
                  h('th', { scope: 'row', class: 'mono', style: 'width:30%' }, data(k)),
                  h('td', { class: 'mono wrap' }, data(v)),
                ),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'No header.'),
    )
    if (mode === null) {
      mode = 'text'
      if (m.body === null) mode = 'hex'
      else {
        try {
          JSON.parse(m.body)
          mode = 'json'
        } catch {
          mode = 'text'
        }
      }
    }
    showBody()
    renderActions(m)
  }
  return {
    el,
    refresh,
    title: id,
    crumbs: [
      h('a', { href: '#/' }, 'Queues'),
      h('a', { href: queueHref(queue), class: 'mono' }, data(queue)),
      data(id, { class: 'mono' }),
    ],
  }
}

// ---- start -----------------------------------------------------------------------------------

function start() {
  document.getElementById('signout').addEventListener('click', () => signOut('Signed out.'))
  window.addEventListener('hashchange', route)
  // A hidden tab polls nothing; shown again, it catches up at once.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && app.asleep) poll(true)
  })
  // The page's main region takes the focus after a navigation, for keyboard and screen readers.
  window.addEventListener('hashchange', () => document.getElementById('main').focus({ preventScroll: true }))
  if (!location.hash) history.replaceState(null, '', '#/')
  route()
}

start()
