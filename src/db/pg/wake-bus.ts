import { randomUUID } from 'node:crypto'
import { SQL } from 'bun'
import type { WakeBusStats } from '../../core/context.ts'
import type { Waiters } from '../../core/waiters.ts'

/**
 * Wake-ups across instances (issue 20; not wired into `hark serve` yet: there is no Postgres
 * mode). Long-polls wait in one process's `Waiters`; with several instances on one database, a
 * write on B must wake the polls held on A. The write's transaction sends the waiter keys it
 * wakes with `pg_notify` (`notify`), so Postgres delivers them on commit and never on rollback;
 * every instance listens on one dedicated connection (Bun's `sql.listen`) and wakes its own
 * waiters for the keys it receives.
 *
 * The writing instance's own waiters are woken by its write path, as on SQLite (after the
 * commit, with no round trip); its own notifications come back to it too and are skipped by
 * the instance id in the payload, so nothing is woken twice.
 *
 * A notification is lost when it is sent while the listening connection is down (Postgres only
 * delivers to connected listeners). So: when Bun reconnects that connection (its `onlisten`
 * runs again, once the LISTEN is acknowledged), every local waiter is woken to read again; and a
 * periodic self-check notifies the instance itself and expects it back: Postgres delivers one
 * listener's notifications in commit order, so the ping coming back proves everything committed
 * before it arrived too; when it does not come back in time while nothing else arrives either,
 * every local waiter reads again. A lost notification costs latency (until the reconnect or the
 * next check), never a change, provided a wake that lands during a poll's async read is not
 * lost: it parks before it reads, or (`pollFor`) reads again when any wake came during the
 * read (test/pg/wake-bus.test.ts `poll`, test/asks/waiters.test.ts).
 */

/** The channel every instance of one database listens on (NOTIFY is per database). */
export const WAKE_CHANNEL = 'hark_wake'

/** Postgres refuses a payload of 8000 bytes or more (NOTIFY_PAYLOAD_MAX_LENGTH). */
export const MAX_PAYLOAD_BYTES = 7999

/**
 * Notifications per statement, parameters well under Postgres' limit (the statements go back
 * to back, not one round trip each).
 */
const NOTIFIES_PER_STATEMENT = 100

/**
 * A notification's text. Keys: `k <instance>` then one key a line; a self-check ping:
 * `p <instance> <n>`. Keys are ids and fixed prefixes (core/waiters.ts), never a newline.
 */
export type WakeMessage =
  | { kind: 'keys'; from: string; keys: string[] }
  | { kind: 'ping'; from: string; n: number }

/**
 * The payloads that carry `keys` (duplicates dropped), each filled up to the limit, in order.
 * Throws on a key that holds a newline or could never fit: a programming error, and failing the
 * write is better than a wake-up that silently never arrives.
 */
export function wakePayloads(instance: string, keys: Iterable<string>): string[] {
  const header = `k ${instance}`
  const headerBytes = Buffer.byteLength(header)
  const payloads: string[] = []
  let parts: string[] = []
  let bytes = headerBytes
  for (const key of new Set(keys)) {
    if (key.includes('\n')) throw new Error(`wake key holds a newline: ${JSON.stringify(key)}`)
    const size = 1 + Buffer.byteLength(key)
    if (headerBytes + size > MAX_PAYLOAD_BYTES) throw new Error(`wake key too long (${size} B)`)
    if (bytes + size > MAX_PAYLOAD_BYTES) {
      payloads.push([header, ...parts].join('\n'))
      parts = []
      bytes = headerBytes
    }
    parts.push(key)
    bytes += size
  }
  if (parts.length > 0) payloads.push([header, ...parts].join('\n'))
  return payloads
}

/** Reads a payload; undefined for one this version does not understand. */
export function readPayload(payload: string): WakeMessage | undefined {
  if (payload.startsWith('k ')) {
    const lines = payload.split('\n')
    const from = (lines[0] as string).slice(2)
    return from ? { kind: 'keys', from, keys: lines.slice(1) } : undefined
  }
  const ping = /^p (\S+) (\d+)$/.exec(payload)
  if (ping) return { kind: 'ping', from: ping[1] as string, n: Number(ping[2]) }
  return undefined
}

/** Where a wake-up is sent: the writing transaction (a `sql.begin` handle). */
export type WakeSender = Pick<SQL, 'unsafe'>

/**
 * Sends the wake-ups for `keys` from `instance` inside `tx`: as few notifications as fit the
 * payload limit, 100 a statement. Every statement is started (`execute`) before this returns
 * its promise, so a caller that sends COMMIT next without awaiting it (a person's pipelined
 * batch, batch-tx.ts) has them all ahead of its COMMIT on the connection: a query Bun.sql is
 * only awaited starts a turn later, and ran after that COMMIT, in a transaction of its own
 * (lost with a crash between the two). Answers how many were sent.
 */
export async function sendWakes(
  tx: WakeSender,
  channel: string,
  instance: string,
  keys: Iterable<string>,
): Promise<number> {
  const payloads = wakePayloads(instance, keys)
  const sent: Promise<unknown>[] = []
  for (let i = 0; i < payloads.length; i += NOTIFIES_PER_STATEMENT) {
    const batch = payloads.slice(i, i + NOTIFIES_PER_STATEMENT)
    const calls = batch.map((_, j) => `pg_notify($1, $${j + 2})`).join(', ')
    sent.push(tx.unsafe(`SELECT ${calls}`, [channel, ...batch]).execute())
  }
  await Promise.all(sent)
  return payloads.length
}

/**
 * Wake-ups sent by a process that listens to none (`hark admin` on Postgres): the servers'
 * waiters still hear what it wrote.
 */
export const wakeSender = (instance: string): Pick<WakeBus, 'notify'> => ({
  notify: async (tx, keys) => {
    await sendWakes(tx, WAKE_CHANNEL, instance, keys)
  },
})

export interface WakeBusOptions {
  /** The shared database's URL; the bus opens its own client (the listener and the pings). */
  url: string
  /** This instance's waiters: woken by key, or all at once when wake-ups may have been lost. */
  waiters: Pick<Waiters, 'wake' | 'wakeAll'>
  channel?: string
  /** How often the self-check pings (ms; default 5 s). */
  checkEveryMs?: number
  /**
   * How long a ping may take to come back before every waiter reads again (ms; default 2 s),
   * unless other notifications arrive meanwhile (see `check`).
   */
  pingTimeoutMs?: number
  /** Told when the safety net woke everyone, and why (for the log). */
  onWakeAll?: (reason: WakeAllReason) => void
}

export type WakeAllReason = 'reconnected' | 'self-check' | 'unreadable'

export class WakeBus {
  /** This instance's id in payloads, and in the connections' `application_name`. */
  readonly instance: string
  private readonly channel: string
  private readonly checkEveryMs: number
  private readonly pingTimeoutMs: number
  /** Notifications heard on the listening connection, of any kind: it is alive while this moves. */
  private heard = 0
  private readonly counts: WakeBusStats = {
    sent: 0,
    received: 0,
    own: 0,
    reconnects: 0,
    checks: 0,
    missedChecks: 0,
    lateChecks: 0,
    wakeAlls: 0,
  }
  private subscription: SQL.ListenSubscription | undefined
  private listens = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private pingSeq = 0
  /** The ping in flight: its number and what to tell when it arrives. */
  private awaited: { n: number; back: (arrived: boolean) => void } | undefined
  private closed = false
  private closing: Promise<void> | undefined

  private constructor(
    private readonly client: SQL,
    private readonly options: WakeBusOptions,
    instance: string,
  ) {
    this.instance = instance
    this.channel = options.channel ?? WAKE_CHANNEL
    this.checkEveryMs = options.checkEveryMs ?? 5_000
    this.pingTimeoutMs = options.pingTimeoutMs ?? 2_000
  }

  /** Connects, listens (resolves once the LISTEN is acknowledged) and starts the self-check. */
  static async start(options: WakeBusOptions): Promise<WakeBus> {
    const instance = randomUUID().replaceAll('-', '').slice(0, 12)
    // One pool connection for the pings, plus the one Bun dedicates to listening. A listening
    // connection is idle by nature: a server-wide idle_session_timeout must not end it.
    const client = new SQL(options.url, {
      max: 1,
      connection: { application_name: `hark-wake-${instance}`, idle_session_timeout: 0 },
    })
    const bus = new WakeBus(client, options, instance)
    try {
      bus.subscription = await client.listen(
        bus.channel,
        (payload) => bus.receive(payload),
        () => bus.listening(),
      )
    } catch (error) {
      await client.close({ timeout: 0 })
      throw error
    }
    bus.schedule()
    return bus
  }

  /**
   * Sends the wake-ups for `keys` inside `tx`, the writing transaction, so they go out with its
   * commit and never without it: as few notifications as fit the payload limit (100 a
   * statement, started at once). Awaited inside the transaction, or started before its COMMIT.
   */
  async notify(tx: WakeSender, keys: Iterable<string>): Promise<void> {
    this.counts.sent += await sendWakes(tx, this.channel, this.instance, keys)
  }

  stats(): WakeBusStats {
    return { ...this.counts }
  }

  /** Stops the self-check, unlistens and closes the bus's connections. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true
      clearTimeout(this.timer)
      this.awaited?.back(false)
      try {
        await this.subscription?.unlisten()
      } finally {
        await this.client.close({ timeout: 0 })
      }
    })()
    return this.closing
  }

  private receive(payload: string): void {
    if (this.closed) return
    this.heard++
    const message = readPayload(payload)
    if (!message) {
      // From a newer instance, say: read everything again rather than miss what it meant.
      this.wakeAll('unreadable')
      return
    }
    if (message.from === this.instance) {
      if (message.kind === 'ping') {
        if (this.awaited?.n === message.n) this.awaited.back(true)
      } else {
        this.counts.own++
      }
      return
    }
    if (message.kind === 'keys') {
      this.counts.received++
      this.options.waiters.wake(...message.keys)
    }
    // Other instances' pings are theirs to check.
  }

  /** Bun's `onlisten`: at the first LISTEN, and again after every reconnect. */
  private listening(): void {
    if (this.listens++ === 0 || this.closed) return
    // Whatever was sent while the connection was down is lost; the LISTEN is active again,
    // so a read from now on sees every change that did not notify us.
    this.counts.reconnects++
    this.wakeAll('reconnected')
    // A ping sent while it was down is lost, and this wake-all already covers it.
    this.awaited?.back(true)
  }

  private wakeAll(reason: WakeAllReason): void {
    this.counts.wakeAlls++
    this.options.waiters.wakeAll()
    this.options.onWakeAll?.(reason)
  }

  private schedule(): void {
    if (this.closed) return
    this.timer = setTimeout(() => void this.check(), this.checkEveryMs)
    // The listening connection already keeps the process alive while the bus is open.
    this.timer.unref()
  }

  /**
   * One self-check: ping ourselves and wait for it. Back: everything committed before it has
   * arrived too. Not back in time, and nothing else heard meanwhile: the listener may be deaf
   * (a half-open connection Bun has not noticed), so everyone reads again. Not back but other
   * notifications arriving: the connection is alive and only behind (Postgres drops nothing
   * while it is connected; a drop is the reconnect's to handle), so it waits on rather than
   * add every poll's re-read to a busy moment, up to `LATE_CHECK_LIMIT` windows.
   */
  private async check(): Promise<void> {
    const n = ++this.pingSeq
    const arrived = new Promise<boolean>((resolve) => {
      this.awaited = { n, back: resolve }
    })
    // A ping that cannot even be sent (the database away) proves nothing either.
    this.client
      .unsafe('SELECT pg_notify($1, $2)', [this.channel, `p ${this.instance} ${n}`])
      .catch(() => {
        if (this.awaited?.n === n) this.awaited.back(false)
      })
    let ok: boolean | 'late' = 'late'
    for (let window = 0; ok === 'late' && window < LATE_CHECK_LIMIT; window++) {
      const heard = this.heard
      ok = await within(arrived, this.pingTimeoutMs)
      if (ok === 'late' && this.heard === heard) ok = false
      if (ok === 'late') this.counts.lateChecks++
    }
    this.awaited = undefined
    if (this.closed) return
    this.counts.checks++
    if (ok !== true) {
      this.counts.missedChecks++
      this.wakeAll('self-check')
    }
    this.schedule()
  }
}

/** How many ping timeouts a self-check waits while other notifications keep arriving. */
const LATE_CHECK_LIMIT = 5

/** `promise`'s value, or 'late' once `ms` have passed (the timer cleared either way). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms)
  })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}
