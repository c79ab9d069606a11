/*!
 * bindings-node/redelay.js and redelay.d.ts are generated from lib/redelay.ts by `npm run build:ts`
 * (tsc -p tsconfig.build.json) and committed: edit lib/redelay.ts, not them.
 */
/// <reference types="node" preserve="true" />
declare global {
    /**
     * For `await using` on a Client or a Subscription whatever the user's `lib`: the symbol as
     * TypeScript's esnext.disposable lib (and @types/node since 20.4) declares it.
     */
    interface SymbolConstructor {
        readonly asyncDispose: unique symbol;
    }
}
/** A message body: bytes are stored as they are, a string as UTF-8. */
export type Body = Buffer | Uint8Array | string;
/** How a queue is laid out in Redis (`client.queue(name, opts)`). */
export interface QueueOptions {
    /**
     * Hash tags the queue's messages are spread over, 1 to 256 (default 1): with N > 1 one queue
     * uses many Redis Cluster masters. Every client must open the queue with the same N.
     */
    shards?: number | undefined;
}
export interface ClientOptions {
    /** Key prefix of every queue (default `redelay`). */
    prefix?: string | undefined;
    /** Largest body accepted by publish, in bytes (default 8 MiB). */
    maxBodyBytes?: number | undefined;
    /** How long to try to reach Redis before a Connection error (default 5000). */
    connectTimeoutMs?: number | undefined;
    /** How long to wait for any one answer from Redis before a Timeout error (default 10000). */
    responseTimeoutMs?: number | undefined;
    /** Default max attempts of messages published through this client (default 10). */
    defaultMaxAttempts?: number | undefined;
    /** Default lease (time to run) of messages published through this client (default 30000). */
    defaultTtrMs?: number | undefined;
    /** Default first retry backoff of messages published through this client. */
    defaultBackoffBaseMs?: number | undefined;
    /** Default largest retry backoff of messages published through this client. */
    defaultBackoffMaxMs?: number | undefined;
    /**
     * Durability across failovers: every publish waits until `replicas` replicas have it (Redis
     * WAIT, also in a cluster) and rejects with ERR_REDELAY_REDIS after `timeoutMs` otherwise —
     * the message is then on the master only; publish it again with the same id.
     */
    waitForReplicas?: {
        replicas: number;
        timeoutMs: number;
    } | undefined;
}
/** At most one of the fields of `T`, the others left out; of `Required<T>`, exactly one. */
export type OneOf<T> = {
    [K in keyof T]-?: Pick<T, K> & {
        [O in Exclude<keyof T, K>]?: undefined;
    };
}[keyof T];
/** The two ways to give a due time (see `When`). */
export interface Due {
    /** Due this many ms after Redis receives the call (the publish, the reschedule …); default 0: due now. */
    delayMs?: number | undefined;
    /** Due at this time (by the Redis clock); a Date or ms since the epoch. A past time means now. */
    at?: Date | number | undefined;
}
/** When a message is due: after `delayMs`, or at `at`; not both (the core refuses both). */
export type When = OneOf<Due>;
export interface PublishFields {
    /** Your own id, unique within the queue (not all digits). A duplicate id changes nothing unless `replace`. */
    id?: string | undefined;
    /** String pairs carried with the message. */
    headers?: Record<string, string> | undefined;
    /** Deliveries allowed before the message goes to the dead letters (default: the client's). */
    maxAttempts?: number | undefined;
    /** Lease of each delivery, ms (default: the client's). */
    ttrMs?: number | undefined;
    /** Replace an existing message with the same id instead of reporting a duplicate. */
    replace?: boolean | undefined;
    /** First retry backoff, doubled at each failed attempt (default: the client's). */
    backoffBaseMs?: number | undefined;
    /** Largest retry backoff (default: the client's). */
    backoffMaxMs?: number | undefined;
}
/** The two ways to give an expiry (see `Expiry`). */
export interface ExpiryFields {
    /** Not delivered after this long from the publish (excludes `expiresAt`). */
    expiresInMs?: number | undefined;
    /** Not delivered after this time, a Date or ms since the epoch (excludes `expiresInMs`). */
    expiresAt?: Date | number | undefined;
}
/** Fields left out (or undefined): what an option set does not take. */
export type Without<T> = {
    [K in keyof T]?: undefined;
};
/**
 * When a message expires undelivered: `expiresInMs` or `expiresAt`, not both (the core refuses
 * both). `dropOnExpiry: true` (on expiry, delete the message instead of keeping it as a dead
 * letter, "expired") only with one of them.
 */
export type Expiry = (OneOf<ExpiryFields> & {
    dropOnExpiry?: false | undefined;
}) | {
    expiresInMs: number | undefined;
    expiresAt?: undefined;
    dropOnExpiry?: boolean | undefined;
} | {
    expiresAt: Date | number | undefined;
    expiresInMs?: undefined;
    dropOnExpiry?: boolean | undefined;
};
export type PublishOptions = PublishFields & When & Expiry;
export type BatchMessage = PublishOptions & {
    body: Body;
};
export interface Published {
    /** The message id (generated when none was given: all digits on a plain queue, `<ms>-<random>` in hex on a sharded one). */
    id: string;
    status: 'stored' | 'duplicate' | 'replaced';
}
export interface SubscribeOptions {
    /** Handlers running at once (default 10). */
    concurrency?: number | undefined;
    /** Messages leased ahead, waiting for a free handler (0 to 1000; default: same as concurrency, at most 1000). */
    prefetch?: number | undefined;
    /** Lease of each delivery, ms; default: each message's own ttr. Leases are extended while the handler runs. */
    ttrMs?: number | undefined;
    /** How long close() waits for running handlers (default 30000). */
    drainTimeoutMs?: number | undefined;
    /** Longest idle sleep between fetches, in case a wake-up was lost (default 1000). */
    maxIdleMs?: number | undefined;
    /**
     * Do not keep the process alive for this subscription (like `timer.unref()`). When nothing
     * else keeps it alive, the subscription closes (`beforeExit`): finished handlers' outcomes
     * reach Redis and what waits is handed back; then the process exits.
     */
    unref?: boolean | undefined;
}
export interface FetchOptions {
    /** How long to wait for the first message (default 0: return at once). */
    waitMs?: number | undefined;
    /** Lease of every fetched message instead of each one's own ttr. */
    ttrMs?: number | undefined;
}
export interface MessagesOptions {
    /** Messages leased by each fetch (1 to 1000, default 1). */
    batch?: number | undefined;
    /** How long each fetch waits for a first message before the stream fetches again (10 ms or more, default 1000). */
    waitMs?: number | undefined;
    /** Lease of every message instead of each one's own ttr. */
    ttrMs?: number | undefined;
}
export interface NackOptions {
    /** Retry after this long instead of the message's exponential backoff. */
    retryInMs?: number | undefined;
    /** Why; stored with the message (and kept with a dead letter). */
    reason?: string | undefined;
}
export type Handler = (message: Message) => unknown | Promise<unknown>;
/** Which dead letters: these ids, the `n` that died first, or all of them. */
export type DeadSelect = readonly string[] | number | 'all';
export type MessageState = 'scheduled' | 'ready' | 'leased' | 'dead';
/** A stored message, as peek and deadLetters show it. */
export interface MessageInfo {
    id: string;
    state: MessageState;
    body: Buffer;
    headers: Record<string, string>;
    /** Failed or expired attempts so far. */
    attempts: number;
    maxAttempts: number;
    ttrMs: number;
    publishedAt: Date;
    dueAt: Date;
    /** The lease deadline while leased. */
    leaseDeadline: Date | null;
    /** When it died, for a dead letter. */
    diedAt: Date | null;
    /** When it expires undelivered, if it does (`expiresInMs` / `expiresAt`). */
    expiresAt: Date | null;
    /** The reason of the last failure (for a dead letter: why it died; `expired: not delivered before its expiry time` after its expiry). */
    lastError: string | null;
}
/** How many messages the queue holds, in all (`total`) and in each state. */
export interface Stats extends Record<MessageState | 'total', number> {
    /** Redis time of the reading. */
    now: Date;
    /** The part of `leased` past its lease deadline (its consumer gone): the next fetch takes it back as a failed attempt. Live leases are `leased - lapsed`. */
    lapsed: number;
    nextDue: Date | null;
    oldestReadyDue: Date | null;
    /** Consumers receive nothing until `resume()`. */
    paused: boolean;
}
/** One minute, hour or UTC day of a queue's history (or its totals), by the Redis clock. */
export interface HistoryPoint {
    /** Start of the minute, hour or day (totals: when they were read). */
    at: Date;
    /** Messages stored or replaced (a duplicate id counts nothing). */
    published: number;
    delivered: number;
    acked: number;
    /** Failed attempts that will be tried again (nacks and expired leases). */
    retried: number;
    /** Messages that became dead letters out of attempts (an expired one counts under `expired`). */
    dead: number;
    /** Messages that expired before delivery (dead-lettered or dropped). */
    expired: number;
    /** Deliveries per lateness bucket: under 1 ms, 2, 4, … 16384 ms, and the rest (16 buckets). */
    lateness: number[];
    latenessSumMs: number;
}
/** A page of `list`: the messages in that state now, and this page of them. */
export interface ListPage {
    total: number;
    items: MessageInfo[];
}
/** What `search` can look for (see `SearchFor`). */
export interface SearchFields {
    /** Ids starting with this. */
    idPrefix: string;
    /** A header with exactly this value: `{ tenant: 'a' }`. */
    header: Record<string, string>;
    /** Bodies containing these bytes (bodies over 64 KiB kept apart are not searched). */
    body: Body;
    /** Last errors containing this text. */
    error: string;
}
/** What `search` looks for: exactly one of `SearchFields`. */
export type SearchFor = OneOf<Required<SearchFields>>;
/**
 * A bulk action on the messages named by `ids` (at most 10,000) or found by `search` (exactly one
 * of them): delete them, give waiting ones a new due time (`delayMs` or `at`, reschedule only),
 * make waiting ones due now, bring dead letters back, or delete dead letters.
 */
export type BulkOptions = BulkSelect & (({
    action: 'reschedule';
} & When & Without<RespawnExpiryFields>) | ({
    action: 'respawn';
} & RespawnExpiry & Without<Due>) | ({
    action: 'cancel' | 'deliverNow' | 'purge';
} & Without<Due> & Without<RespawnExpiryFields>));
/** The messages of a bulk action: exactly one of `ids` and `search`. */
export type BulkSelect = OneOf<Required<{
    ids: readonly string[];
    search: SearchFor;
}>>;
/** The two ways to change an expiry at a respawn (see `RespawnExpiry`). */
export interface RespawnExpiryFields {
    expiresInMs?: number | undefined;
    clearExpiry?: boolean | undefined;
}
/**
 * What a respawn does to each message's expiry: keeps it (neither given), expires
 * `expiresInMs` after the respawn, or `clearExpiry: true` never expires; not both.
 */
export type RespawnExpiry = OneOf<RespawnExpiryFields>;
/** What a bulk action did. */
export interface BulkReport {
    /** Messages named (ids given, or search matches). */
    matched: number;
    /** Messages the action applied to (the others were gone, leased, not dead …). */
    done: number;
    /** Records a search looked at. */
    scanned: number;
}
/** One bounded step of a search (about 500 records looked at). */
export interface SearchPage {
    /** What matched in this step (a message may show up twice over a whole search). */
    items: MessageInfo[];
    /** Records looked at in this step. */
    scanned: number;
    /** Pass it to the next call; null once the whole queue was scanned. */
    cursor: string | null;
}
export interface VerifyReport {
    records: number;
    problems: string[];
    ok: boolean;
}
/**
 * Counts kept by a subscription: messages leased (`delivered`), handler runs that finished
 * (`handled`), acked after the handler returned, nacked after it threw (a handler's own
 * `ack()`/`nack()` counts in neither), settles refused because the lease was lost, and fetch or
 * settle calls that failed (the loop retries).
 */
export type Counters = Record<'delivered' | 'handled' | 'acked' | 'nacked' | 'leaseLost' | 'errors', number>;
export type ErrorCode = `ERR_REDELAY_${'INVALID_ARGUMENT' | 'CONNECTION' | 'TIMEOUT' | 'LEASE_LOST' | 'NOT_FOUND' | 'REDIS' | 'HANDLER'}`;
export type ErrorKind = 'InvalidArgument' | 'Connection' | 'Timeout' | 'LeaseLost' | 'NotFound' | 'Redis' | 'Handler';
/**
 * How far a long run got before an error stopped it (`RedelayError.soFar`), by the core's wire
 * names: `count` for a respawn or purge of dead letters, `matched`, `done` and `scanned` (a
 * `BulkReport`'s) for a bulk action. What it counts stays done.
 */
export type SoFar = {
    readonly count: number;
} | {
    readonly matched: number;
    readonly done: number;
    readonly scanned: number;
};
/** A log record of the core (targets `redelay::…`). */
export interface LogRecord {
    level: 'error' | 'warn' | 'info' | 'debug' | 'trace';
    target: string;
    message: string;
}
/** The error codes by kind: `ErrorCodes.LeaseLost === 'ERR_REDELAY_LEASE_LOST'`. */
declare const ErrorCodes: Readonly<Record<ErrorKind, ErrorCode>>;
/** Every error redelay raises. */
declare class RedelayError extends Error {
    readonly name: 'RedelayError';
    /** One of the ERR_REDELAY_* codes. */
    readonly code: ErrorCode;
    /** The core's kind of error. */
    readonly kind: ErrorKind;
    /**
     * Set when the error stopped a long run part way (`queue.bulk`, `respawn`, `purgeDead`): what
     * it had done so far (the message says it too); undefined for every other error.
     */
    readonly soFar?: SoFar;
    constructor(code: ErrorCode, message: string, options?: {
        cause?: unknown;
    });
}
/**
 * Throw it from a handler to retry after `retryInMs` instead of the message's backoff. The delay
 * follows the rule of `nack({ retryInMs })`, the core's in every language: 0 to 3650 days, else
 * the constructor throws an ERR_REDELAY_INVALID_ARGUMENT RedelayError.
 */
declare class RetryLater extends Error {
    readonly retryInMs: number;
    constructor(message: string, retryInMs: number);
}
/**
 * Sends the core's log records up to `level` (default `debug`) to `fn`; `null` restores the
 * default: on the main thread, warnings and errors as process warnings (`RedelayWarning`),
 * everything on stderr when `DEBUG=redelay`; in a worker thread, no logger. Each thread has its
 * own logger, which gets every record of the process up to its level: a worker's does not
 * replace the main thread's, and goes when the worker ends.
 */
declare function setLogger(fn: ((record: LogRecord) => void) | null, level?: LogRecord['level'] | 'off'): void;
/** What the library makes (`new` refuses): holds the native object. */
declare class Handle {
    protected constructor(token: symbol, n: unknown);
}
declare class Client extends Handle {
    private constructor();
    /** Connects: `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS) or `unix:///path/to/redis.sock`. */
    static connect(url: string, opts?: ClientOptions): Promise<Client>;
    /**
     * A handle to the queue `name` (1 to 128 bytes of `A-Z a-z 0-9 _ - . :`), spread over
     * `opts.shards` hash tags (1 to 256; every client must name the same count). Throws RedelayError.
     */
    queue(name: string, opts?: QueueOptions): Queue;
    get prefix(): string;
    /**
     * One subscription over several queues of this client, with one concurrency limit: an array
     * is strict priority (always the first queue with a due message), an object gives weights
     * (`{ urgent: 5, default: 3, bulk: 1 }`, 1 to 1000 each). `message.queue` says where each
     * delivery comes from. A sharded queue is consumed with the shard count stored in Redis.
     */
    subscribe(queues: readonly string[] | Readonly<Record<string, number>>, handler: Handler, opts?: SubscribeOptions): Promise<Subscription>;
    /**
     * A pull from several queues of this client: leases up to `max` (1 to 1000, default 1) due messages of the
     * first of `queues` (names in priority order, 1 to 100 of them; a sharded queue is read with the
     * shard count stored in Redis) that has any, waiting up to `opts.waitMs` (default 0) for one.
     * All messages of one call come from one queue; `message.queue` names it. Settle each with
     * ack/nack before its lease (`opts.ttrMs`, default each message's own ttr) runs out.
     */
    fetch(queues: readonly string[], max?: number, opts?: FetchOptions): Promise<Message[]>;
    get closed(): boolean;
}
interface Client {
    /** Names of the queues published to under this prefix. */
    queues(): Promise<string[]>;
    ping(): Promise<void>;
    /** Closes every subscription of this client gracefully; later calls reject with ERR_REDELAY_CONNECTION. */
    close(): Promise<void>;
    /** `close()`, for `await using client = await Client.connect(url)` (Node 18.18+ and 20.4+ have the symbol). */
    [Symbol.asyncDispose](): Promise<void>;
}
declare class Queue extends Handle {
    private constructor();
    get name(): string;
    /** Publishes one message; resolves to its id and whether it was stored, a duplicate or replaced. */
    publish(body: Body, opts?: PublishOptions): Promise<Published>;
    /**
     * Publishes many messages (`{ body, ...options }` each, up to 100,000) in one round trip; one
     * bad message refuses the whole batch.
     */
    publishBatch(messages: BatchMessage[]): Promise<Published[]>;
    /**
     * Runs `handler` for every due message, up to `opts.concurrency` at a time. Returning (or
     * resolving) acks it; throwing or rejecting nacks it with the error's message (throw a
     * RetryLater to choose the delay).
     */
    subscribe(handler: Handler, opts?: SubscribeOptions): Promise<Subscription>;
    /**
     * Leases up to `max` (1 to 1000, default 1) due messages, waiting up to `opts.waitMs` (default 0)
     * for the first; settle each with ack/nack before its lease runs out.
     */
    fetch(max?: number, opts?: FetchOptions): Promise<Message[]>;
    /**
     * The queue's messages one at a time, on the core's message stream:
     * `for await (const msg of queue.messages({ batch: 10 }))`. Each fetch leases up to
     * `opts.batch` due messages, waiting up to `opts.waitMs` for a first one and fetching again
     * while nothing is due, so the loop waits as long as the queue is empty. Settle every message.
     * Leaving the loop (`break`, `return`, a throw) or `close()` hands back the messages fetched
     * and not given out yet: due now, no attempt counted. Throws RedelayError for bad options.
     */
    messages(opts?: MessagesOptions): MessageStream;
}
/** The messages of `queue.messages()`: an async iterator that never ends by itself (see there). */
declare class MessageStream extends Handle implements AsyncIterableIterator<Message> {
    private constructor();
    [Symbol.asyncIterator](): this;
    /** The next message: one fetched earlier and not given out yet, or the first of the next fetch that leases any. */
    next(): Promise<IteratorResult<Message, undefined>>;
    /** What `break` calls: `close()`, then the iteration is done. */
    return(): Promise<IteratorResult<Message, undefined>>;
    /**
     * Ends the stream, also from elsewhere while a loop waits (a signal handler: its `next()` then
     * ends the iteration): the messages fetched and not given out are handed back (due now, no
     * attempt counted) before it resolves. Iterating then ends at once; calling it again does nothing.
     */
    close(): Promise<void>;
}
interface Queue {
    ack(id: string, token: string): Promise<void>;
    /** Resolves to true when the message went to the dead letters. */
    nack(id: string, token: string, opts?: NackOptions): Promise<boolean>;
    /** Hands a leased message back unprocessed: due now, no attempt counted. */
    release(id: string, token: string): Promise<void>;
    extend(id: string, token: string, ttrMs: number): Promise<void>;
    /** Deletes a message wherever it is; false when there was none. */
    cancel(id: string): Promise<boolean>;
    /** A new due time for a scheduled or ready message; resolves to it. */
    reschedule(id: string, when: Date | number | OneOf<Required<Due>>): Promise<Date>;
    peek(id: string): Promise<MessageInfo | null>;
    stats(): Promise<Stats>;
    /** Dead letters, the oldest death first (default offset 0, limit 100); a page ends early at about 1 MiB of bodies. */
    deadLetters(opts?: {
        offset?: number | undefined;
        limit?: number | undefined;
    }): Promise<MessageInfo[]>;
    /**
     * Brings dead letters back (attempts reset, due now); each keeps its own expiry, or with
     * `expiresInMs` expires that long after the respawn. Resolves to how many.
     */
    respawn(select: DeadSelect, opts?: RespawnExpiry): Promise<number>;
    purgeDead(select: DeadSelect): Promise<number>;
    verify(): Promise<VerifyReport>;
    /** Deletes the whole queue: every message in every state. */
    destroy(): Promise<void>;
    /**
     * Consumers stop receiving (leases in flight finish normally); publishes go on. Stored in
     * Redis: it survives restarts. Resolves to false when it was paused already.
     */
    pause(): Promise<boolean>;
    /** Resolves to false when it was not paused. */
    resume(): Promise<boolean>;
    /** Counting history on (the default) or off, for every client; false when it already was so. */
    setHistory(on: boolean): Promise<boolean>;
    /** What happened per minute (kept 2 days), hour (kept 90 days) or UTC day (its hours summed), at most 1440 points (91 by day). */
    history(since: Date | number, until: Date | number, step?: 'minute' | 'hour' | 'day'): Promise<HistoryPoint[]>;
    /** The history counters' totals since the queue began. */
    historyTotals(): Promise<HistoryPoint>;
    /** How many waiting messages fall due in each of `buckets` (1 to 1000) spans of `widthMs` from `from`. */
    upcoming(from: Date | number, widthMs: number, buckets: number): Promise<{
        at: Date;
        count: number;
    }[]>;
    /** A page of the messages in `state`, in its order (default offset 0, limit 100; limit 1 to 1000); it ends early at about 1 MiB of bodies. */
    list(state: MessageState, opts?: {
        offset?: number | undefined;
        limit?: number | undefined;
    }): Promise<ListPage>;
    /** One bounded step of a search over every message; call again with `cursor` until it is null. */
    search(what: SearchFor, cursor?: string | null): Promise<SearchPage>;
    /** One action on many messages, in bounded steps (not atomic: see BulkOptions). */
    bulk(opts: BulkOptions): Promise<BulkReport>;
}
declare class Subscription extends Handle {
    private constructor();
    get closed(): boolean;
    /** The names of the queues consumed, in priority order (or as their weights were given). */
    get queues(): string[];
    /**
     * The latest error of a fetch or settle call (the subscription retries by itself; counted in
     * `counters().errors`), kept after it recovered; null when there was none.
     */
    get lastError(): RedelayError | null;
    counters(): Counters;
}
interface Subscription {
    /** Stops fetching, lets running handlers finish (up to drainTimeoutMs); then the process can exit. */
    close(): Promise<void>;
    /** `close()`, for `await using sub = await queue.subscribe(handler)` (Node 18.18+ and 20.4+ have the symbol). */
    [Symbol.asyncDispose](): Promise<void>;
}
interface MessageStream {
    /** `close()`, for `await using stream = queue.messages()` (Node 18.18+ and 20.4+ have the symbol). */
    [Symbol.asyncDispose](): Promise<void>;
}
/** One delivery of a message. Subscription handlers get one per delivery; so does `queue.fetch` or `client.fetch`. */
declare class Message {
    #private;
    readonly id: string;
    /** The queue it came from (see `client.subscribe` and `client.fetch` over several queues). */
    readonly queue: string;
    /**
     * The body, byte for byte as published. It is a view into one buffer holding the bodies of
     * the whole batch fetched with it (as `Buffer.subarray` gives): keeping it keeps that buffer.
     * To hold a body long after its handler, keep a copy (`Buffer.from(msg.body)`).
     */
    readonly body: Buffer;
    readonly headers: Record<string, string>;
    /** 1 on the first delivery. */
    readonly attempt: number;
    readonly maxAttempts: number;
    readonly publishedAt: Date;
    readonly dueAt: Date;
    readonly deliveredAt: Date;
    /** deliveredAt - dueAt, by the Redis clock. */
    readonly latenessMs: number;
    /** When the message expires (it is not delivered again after that), or null. */
    readonly expiresAt: Date | null;
    /** The lease token, for queue.ack(id, token) and friends. */
    readonly token: string;
    /** The reason given by the previous failed attempt. */
    readonly lastError: string | null;
    private constructor();
    /** The body as UTF-8 text. */
    text(): string;
    /** The body parsed as JSON. */
    json<T = unknown>(): T;
    /** True once acked or nacked: by the handler itself, or by its subscription after the handler finished. */
    get settled(): boolean;
    /** When the current lease runs out unless extended (a subscription extends it while the handler runs). */
    get leaseDeadline(): Date;
    /**
     * Acknowledges now. In a subscription handler this is optional (returning acks); once the
     * handler has finished, the subscription has settled the message and this rejects with
     * ERR_REDELAY_LEASE_LOST.
     */
    ack(): Promise<void>;
    /** Resolves to true when the message went to the dead letters. Same rule as ack() in handlers. */
    nack(opts?: NackOptions): Promise<boolean>;
    /**
     * Hands the message back unprocessed, due now, without counting an attempt (work that cannot
     * start, e.g. while shutting down). Same rule as ack() in handlers.
     */
    release(): Promise<void>;
    /** Extends the lease to ttrMs from now. */
    extend(ttrMs: number): Promise<void>;
}
export { Client, Queue, MessageStream, Subscription, Message, RedelayError, RetryLater, ErrorCodes, setLogger };
