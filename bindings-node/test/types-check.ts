// Compiled by `tsc --strict` (see test/types.test.js): the declarations describe the API, and
// misuse is a type error.
import { Client, Queue, Message, Subscription, RedelayError, RetryLater, ErrorCodes, setLogger } from 'redelay'
import type { Published, Stats, MessageInfo, VerifyReport, Counters, ErrorCode, PublishOptions } from 'redelay'
import type { HistoryPoint, ListPage, SearchPage, BulkReport, QueueOptions, SoFar } from 'redelay'

export async function everything(url: string): Promise<void> {
  const c: Client = await Client.connect(url, { prefix: 'p', maxBodyBytes: 1024, connectTimeoutMs: 100 })
  const q: Queue = c.queue('q')
  const layout: QueueOptions = { shards: 16 }
  const sharded: Queue = c.queue('q', layout)
  await sharded.stats()
  // @ts-expect-error shards is a number
  c.queue('q', { shards: '16' })
  const opts: PublishOptions = { delayMs: 5, id: 'x', headers: { a: 'b' }, maxAttempts: 3, ttrMs: 1000 }
  const p: Published = await q.publish(Buffer.from('x'), opts)
  const s1: 'stored' | 'duplicate' | 'replaced' = p.status
  await q.publish(new Uint8Array([1]))
  await q.publish('text', { at: Date.now() })
  const batch: Published[] = await q.publishBatch([{ body: 'a' }, { body: Buffer.alloc(1), delayMs: 3 }])
  const sub: Subscription = await q.subscribe(
    async (m: Message) => {
      const b: Buffer = m.body
      const d: Date = m.publishedAt
      const late: number = m.latenessMs
      const h: string | undefined = m.headers['k']
      await m.extend(1000)
      void [b, d, late, h]
    },
    { concurrency: 2, ttrMs: 500, unref: true },
  )
  // a sync handler
  await q.subscribe((m) => {
    void m.id
  })
  const k: Counters = sub.counters()
  await sub.close()
  const got: Message[] = await q.fetch(10, { waitMs: 100 })
  const one: Message[] = await q.fetch()
  const first: Message[] = await c.fetch(['a', 'b'])
  for (const m of got) {
    const dead: boolean = await m.nack({ retryInMs: 10, reason: 'later' })
    void dead
  }
  await q.ack('id', 'token')
  await q.nack('id', 'token', { reason: 'x' })
  await q.release('id', 'token')
  await q.extend('id', 'token', 1000)
  const ok: boolean = await q.cancel('id')
  const due: Date = await q.reschedule('id', new Date())
  await q.reschedule('id', { delayMs: 5 })
  await q.destroy()
  setLogger((r) => console.log(r.level, r.target, r.message), 'warn')
  setLogger(null)
  const info: MessageInfo | null = await q.peek('id')
  const st: Stats = await q.stats()
  const dl: MessageInfo[] = await q.deadLetters({ limit: 5 })
  const n: number = (await q.respawn(['a'])) + (await q.respawn(3)) + (await q.purgeDead('all'))
  const v: VerifyReport = await q.verify()
  const paused: boolean = (await q.pause()) && (await q.resume()) && (await q.setHistory(true)) && st.paused
  const live: number = st.leased - st.lapsed
  const many: Subscription = await c.subscribe(['urgent', 'default'], (m) => void m.queue, { concurrency: 4 })
  await c.subscribe({ urgent: 5, default: 1 }, () => {})
  const pulled: Message[] = await c.fetch(['urgent', 'default'], 10, { waitMs: 1000, ttrMs: 60_000 })
  const hist: HistoryPoint[] = await q.history(new Date(Date.now() - 3_600_000), Date.now(), 'hour')
  const tot: HistoryPoint = await q.historyTotals()
  const next: { at: Date; count: number }[] = await q.upcoming(new Date(), 60_000, 10)
  const page: ListPage = await q.list('dead', { limit: 10 })
  const found: SearchPage = await q.search({ header: { tenant: 'a' } }, page.items[0]?.id)
  const bulk: BulkReport = await q.bulk({ action: 'reschedule', search: { idPrefix: 'order-' }, delayMs: 1000 })
  void [paused, live, many, pulled, hist, tot, next, page, found, bulk, info?.expiresAt]
  await c.close()
  try {
    c.queue('')
  } catch (e) {
    if (e instanceof RedelayError) {
      const code: ErrorCode = e.code
      if (e.code === ErrorCodes.InvalidArgument) void code
      // A long run's totals: one shape or the other, narrowed by its keys.
      const soFar: SoFar | undefined = e.soFar
      if (soFar !== undefined && 'count' in soFar) void (soFar.count + 1)
      else if (soFar !== undefined) void (soFar.matched + soFar.done + soFar.scanned)
      // @ts-expect-error the totals are read-only
      if (soFar !== undefined && 'count' in soFar) soFar.count = 0
    }
  }
  const r = new RetryLater('busy', 100)
  void [s1, batch, k, ok, due, info, st, dl, n, v, r, one, first]
}

// `await using` closes them at the end of the block (their `[Symbol.asyncDispose]` is `close`).
export async function disposal(url: string): Promise<void> {
  await using c = await Client.connect(url)
  await using sub = await c.queue('q').subscribe(() => {})
  const close: () => Promise<void> = sub[Symbol.asyncDispose]
  void close
}

export async function misuse(q: Queue): Promise<void> {
  // @ts-expect-error a number is not a body
  await q.publish(42)
  // @ts-expect-error delayMs and at exclude each other
  await q.publish('x', { delayMs: 5, at: new Date() })
  // @ts-expect-error delayMs and at exclude each other
  await q.reschedule('x', { delayMs: 5, at: 1 })
  // @ts-expect-error delay is spelled delayMs
  await q.publish('x', { delay: 5 })
  await q.subscribe((m) => {
    // @ts-expect-error a delivered body is a Buffer, not a string
    const s: string = m.body
    void s
  })
  // @ts-expect-error history steps are minutes, hours or days
  await q.history(0, 1, 'week')
  // @ts-expect-error no such bulk action
  await q.bulk({ action: 'explode', ids: ['a'] })
  // @ts-expect-error objects come from Client.connect and client.queue
  new Queue()
  // @ts-expect-error a bulk action names its messages: ids or search
  await q.bulk({ action: 'cancel' })
  // @ts-expect-error ids and search exclude each other
  await q.bulk({ action: 'cancel', ids: ['a'], search: { idPrefix: 'a' } })
  // @ts-expect-error expiresInMs and expiresAt exclude each other
  await q.publish('x', { expiresInMs: 5, expiresAt: 5 })
  // @ts-expect-error expiresInMs and expiresAt exclude each other, in a batch too
  await q.publishBatch([{ body: 'x', expiresInMs: 5, expiresAt: new Date() }])
  // @ts-expect-error a respawn's expiresInMs and clearExpiry exclude each other
  await q.respawn('all', { expiresInMs: 5, clearExpiry: true })
  // @ts-expect-error a search looks for one thing
  await q.search({ idPrefix: 'a', error: 'b' })
  // @ts-expect-error a search looks for something
  await q.search({})
  // @ts-expect-error only reschedule takes a due time
  await q.bulk({ action: 'cancel', ids: ['a'], delayMs: 5 })
  // @ts-expect-error only respawn takes an expiry
  await q.bulk({ action: 'reschedule', ids: ['a'], delayMs: 5, clearExpiry: true })
  // @ts-expect-error dropOnExpiry needs an expiry
  await q.publish('x', { dropOnExpiry: true })
  // @ts-expect-error dropOnExpiry needs an expiry, in a batch too
  await q.publishBatch([{ body: 'x', delayMs: 5, dropOnExpiry: true }])
}

// Readonly arrays (`as const`) are taken wherever a list is, and an option given as undefined
// type-checks under exactOptionalPropertyTypes (tsconfig.json) as the runtime ignores it.
export async function readonlyAndUndefined(c: Client, q: Queue, maybe: number | undefined): Promise<void> {
  const QUEUES = ['urgent', 'default'] as const
  const IDS: readonly string[] = ['a', 'b']
  await c.subscribe(QUEUES, () => {})
  await c.subscribe({ urgent: 5, bulk: 1 } as const, () => {})
  await c.fetch(QUEUES, 10)
  await q.respawn(IDS)
  await q.purgeDead(IDS)
  await q.bulk({ action: 'cancel', ids: IDS })
  await q.publish('x', { delayMs: maybe, at: undefined, expiresInMs: maybe, ttrMs: maybe, headers: undefined })
  await q.publishBatch([{ body: 'x', delayMs: maybe }])
  await q.publish('x', { expiresInMs: 5, dropOnExpiry: true })
  await q.publish('x', { expiresAt: new Date(), dropOnExpiry: true, delayMs: 1 })
  await q.publish('x', { expiresInMs: maybe, dropOnExpiry: maybe !== undefined })
  await q.publish('x', { dropOnExpiry: false })
  await q.bulk({ action: 'respawn', ids: IDS, clearExpiry: true })
  await q.bulk({ action: 'deliverNow', search: { idPrefix: 'a' }, delayMs: undefined })
  await q.fetch(1, { waitMs: maybe, ttrMs: undefined })
  await c.fetch(['a'], 1, { waitMs: maybe })
  const sub = await q.subscribe(() => {}, { concurrency: maybe, prefetch: undefined, unref: undefined })
  await sub.close()
  await q.nack('id', 'token', { retryInMs: maybe, reason: undefined })
  await q.respawn('all', { expiresInMs: maybe, clearExpiry: undefined })
  await q.bulk({ action: 'reschedule', ids: IDS, search: undefined, delayMs: maybe })
  await q.search({ idPrefix: 'a', error: undefined })
  await q.deadLetters({ offset: maybe, limit: undefined })
  await q.list('ready', { offset: maybe })
  for await (const m of q.messages({ batch: maybe, waitMs: undefined })) await m.ack()
  await Client.connect('redis://x', { prefix: undefined, connectTimeoutMs: maybe })
  c.queue('q', { shards: maybe })
}
