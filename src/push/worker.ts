import webpush from 'web-push'
import type { Ctx, Tx } from '../core/context.ts'
import {
  type CheckedEndpoint,
  checkEndpoint,
  dnsResolver,
  pinnedRequest,
  type Resolver,
} from './endpoint.ts'
import { authKey, p256dhKey } from './keys.ts'
import { type Outcome, outcomeOf } from './outcome.ts'
import { MAX_PAYLOAD_BYTES, messagePayload, type PushPayload } from './payload.ts'
import { sendDueReminders } from './reminders.ts'
import { mintCapability } from './service.ts'
import type { QueuedPush } from './store.ts'
import { VapidHolder } from './vapid.ts'

/**
 * Sends what `push_queue` holds. The request that wrote a message only queued its pushes;
 * this loop encrypts (web-push, RFC 8291) and posts each one, so a slow or failing push
 * service never slows an agent. Retries 429/5xx/network errors with exponential backoff
 * (honouring Retry-After), forgets devices the push service says are gone (404/410), and
 * those that refuse our VAPID signature (401/403) `vapidRefusalsToRemove` times in a row.
 * A message push is built afresh from its message at each attempt: a message deleted (or
 * edited) while its push waited for a retry is not sent in its old form.
 */
export class PushWorker {
  /** Tunables: public so tests can make retries quick. */
  retryBaseMs = 2000
  maxDelayMs = 30 * 60_000
  maxAttempts = 12
  concurrency = 16
  timeoutMs = 30_000
  reminderEveryMs = 15_000
  /** A send in flight holds its row this long; after a crash the row is sent again. */
  leaseMs = 120_000
  /**
   * 401/403 in a row (no success between) after which a device is removed: push services bind
   * a subscription to the VAPID key it was made with, so a device refused this often will not
   * recover (keys lost or replaced); removing it shows the person it needs turning on again.
   * Counted in memory: a restart starts the count again.
   */
  vapidRefusalsToRemove = 3
  /**
   * DNS lookups for the endpoint check, whose answer the push then uses (`ContextOptions.resolve`
   * gives another: tests need a public-looking name, or one that answers otherwise the second
   * time).
   */
  resolve: Resolver

  readonly vapid: VapidHolder
  private ctx?: Ctx
  private timer?: ReturnType<typeof setTimeout>
  private reminders?: ReturnType<typeof setInterval>
  private kicked = false
  private inflight = 0
  private readonly abort = new AbortController()
  private stopped = false
  private readonly refusals = new Map<string, number>()
  /** Sends finished, by outcome (`sent`, `retry`, `gone`...), for `/metrics`. */
  readonly outcomes = new Map<string, number>()
  /** Sends under way, until their outcome is recorded (or handed back when stopping). */
  private readonly delivering = new Set<Promise<void>>()
  private pumping = false
  private pumpAgain = false

  /**
   * `vapid`: the keys to sign with; the data directory's vapid.json when none is given.
   * `resolve`: the DNS lookups of endpoints (the system's by default).
   */
  constructor(dataDir: string, vapid?: VapidHolder, resolve: Resolver = dnsResolver) {
    this.vapid = vapid ?? new VapidHolder(dataDir)
    this.resolve = resolve
  }

  async start(ctx: Ctx): Promise<void> {
    this.ctx = ctx
    // Leases this process held before a crash go back to the queue at once. Not when other
    // instances share the queue (Postgres): their leases are of sends in flight; a dead
    // instance's run out (`leaseMs`) and are claimed again.
    if (!ctx.database.shared) {
      await ctx.writes.apply(async (tx) => await tx.store.push.releaseLeases(ctx.clock.now()))
    }
    this.reminders = setInterval(async () => await this.tickReminders(), this.reminderEveryMs)
    this.reminders.unref?.()
    this.kick()
  }

  /** Settles once every send under way has been recorded or handed back (after `stop`). */
  async drained(): Promise<void> {
    while (this.delivering.size > 0) await Promise.all(this.delivering)
  }

  /** Stops sending; sends in flight are cut short and handed back to the queue (`drained`). */
  stop(): void {
    this.stopped = true
    this.abort.abort()
    clearTimeout(this.timer)
    clearInterval(this.reminders)
    this.vapid.close()
  }

  get isStopped(): boolean {
    return this.stopped
  }

  /** Something was queued: look at the queue once the current transaction has committed. */
  kick(): void {
    if (this.kicked || this.stopped) return
    this.kicked = true
    setImmediate(async () => {
      this.kicked = false
      await this.pump()
    })
  }

  /** The VAPID `sub`: the base URL when it is public https, else a mailto (push services want one). */
  private subject(ctx: Ctx): string {
    const base = new URL(ctx.config.baseUrl)
    if (base.protocol === 'https:' && base.hostname !== 'localhost') return base.origin
    return `mailto:${ctx.config.smtpFrom ?? `hark@${base.hostname}`}`
  }

  /**
   * One pump at a time (its claim awaits the store): a pump asked for meanwhile runs once the
   * current one is done, so two never count the same free slots.
   */
  private async pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true
      return
    }
    this.pumping = true
    try {
      await this.pumpOnce()
    } finally {
      this.pumping = false
    }
    if (this.pumpAgain) {
      this.pumpAgain = false
      await this.pump()
    }
  }

  private async pumpOnce(): Promise<void> {
    const ctx = this.ctx
    if (!ctx || this.stopped) return
    clearTimeout(this.timer)
    this.timer = undefined
    const free = this.concurrency - this.inflight
    if (free > 0) {
      const now = ctx.clock.now()
      // A lease needs no flush of its own before the send: one lost to a crash only means the
      // push is sent again after the restart, as a lease that ran out would be.
      const due = await ctx.writes.apply(
        async (tx) => await tx.store.push.claim(now, free, now + this.leaseMs),
      )
      for (const row of due) {
        this.inflight++
        const delivery = this.deliver(ctx, row).catch((error) => {
          ctx.log.error(`push ${row.id}: ${(error as Error).message}`)
        })
        this.delivering.add(delivery)
        void delivery.finally(async () => {
          this.delivering.delete(delivery)
          this.inflight--
          await this.pump()
        })
      }
    }
    if (this.inflight >= this.concurrency) return // a finishing send pumps again
    const next = await ctx.store.push.nextDue()
    if (next === null) return
    // Capped so a clock step (or a lease of a send that hung) never parks the queue for long.
    const wait = Math.min(Math.max(0, next - ctx.clock.now()), 60_000)
    this.timer = setTimeout(async () => await this.pump(), wait)
  }

  private async deliver(ctx: Ctx, row: QueuedPush): Promise<void> {
    let outcome: Outcome
    try {
      outcome = await this.send(ctx, row)
    } catch (error) {
      outcome = { kind: 'retry', why: (error as Error).message }
    }
    if (this.stopped) {
      // Stopping (the database is still open: closing waits for `drained`). A push that went out
      // is recorded as sent; one the stop cut short goes back to the queue now, for the next
      // start or another instance, instead of waiting out its lease. If even that cannot be
      // written (the write path closed), the lease runs out as after a crash.
      const sent = outcome
      await ctx.writes
        .apply(async (tx) =>
          sent.kind === 'sent'
            ? await this.record(ctx, tx, row, sent)
            : await tx.store.push.retry(row.id, row.attempts, ctx.clock.now()),
        )
        .catch(() => {})
      return
    }
    if (outcome.kind === 'refused' && (await this.keysReplaced())) {
      // Signed with a pair replaced since (a rotation by another instance or `hark admin`,
      // not yet re-read here): not the device's fault; again at once with the new pair.
      outcome = { kind: 'resign' }
    }
    await ctx.writes.apply(async (tx) => this.record(ctx, tx, row, outcome))
  }

  /** Whether the keys read again now differ from those held (a read failing: no). */
  private async keysReplaced(): Promise<boolean> {
    const held = this.vapid.current().publicKey
    const now = await this.vapid.refresh().catch(() => this.vapid.current())
    return now.publicKey !== held
  }

  /** What a send's outcome does to the queue and the subscription (one unit of the write path). */
  private async record(ctx: Ctx, tx: Tx, row: QueuedPush, outcome: Outcome): Promise<void> {
    const name = outcome.kind === 'badKeys' ? 'bad_keys' : outcome.kind
    this.outcomes.set(name, (this.outcomes.get(name) ?? 0) + 1)
    const store = tx.store.push
    const now = ctx.clock.now()
    const host = new URL(row.endpoint).host
    switch (outcome.kind) {
      case 'sent':
        await store.done(row.id)
        await store.succeeded(row.subscription_id, now)
        this.refusals.delete(row.subscription_id)
        return
      case 'stale':
        await store.done(row.id)
        ctx.log.info(`push ${row.id} to ${host} not sent: ${outcome.why}`)
        return
      case 'refused': {
        const refusals = (this.refusals.get(row.subscription_id) ?? 0) + 1
        if (refusals < this.vapidRefusalsToRemove) {
          this.refusals.set(row.subscription_id, refusals)
          await store.done(row.id)
          ctx.log.error(
            `push: ${host} refused the VAPID signature (HTTP ${outcome.status}) for subscription ` +
              `${row.subscription_id} (${refusals} of ${this.vapidRefusalsToRemove}); check ` +
              `${ctx.database.shared ? "the database's vapid_keys" : "the data directory's vapid.json"} ` +
              '(a device subscribed under other keys must subscribe again)',
          )
          return
        }
        this.refusals.delete(row.subscription_id)
        await store.remove(row.subscription_id)
        ctx.log.warn(
          `push: ${host} refused the VAPID signature ${refusals} times in a row for subscription ` +
            `${row.subscription_id}; removed (the device must turn notifications on again)`,
        )
        return
      }
      case 'gone':
        // The device unsubscribed or the browser dropped it: forget it and its queued pushes.
        await store.remove(row.subscription_id)
        ctx.log.info(`push: ${host} says subscription ${row.subscription_id} is gone; removed`)
        return
      case 'badKeys':
        await store.remove(row.subscription_id)
        ctx.log.warn(
          `push: subscription ${row.subscription_id} has keys no push can be encrypted to ` +
            `(${outcome.why}); removed`,
        )
        return
      case 'drop':
        await store.done(row.id)
        ctx.log.warn(`push to ${host} dropped: ${outcome.why}`)
        return
      case 'resign':
        ctx.log.info(`push ${row.id} to ${host}: the VAPID keys were rotated; sent again with them`)
        await store.retry(row.id, row.attempts, now)
        tx.after(() => this.kick())
        return
      case 'retry': {
        const attempts = row.attempts + 1
        if (attempts >= this.maxAttempts) {
          await store.done(row.id)
          ctx.log.warn(`push to ${host} dropped after ${attempts} attempts: ${outcome.why}`)
          return
        }
        const backoff = this.retryBaseMs * 2 ** (attempts - 1) * (0.8 + Math.random() * 0.4)
        const delay = Math.min(this.maxDelayMs, Math.max(backoff, outcome.retryAfterMs ?? 0))
        await store.retry(row.id, attempts, now + Math.round(delay))
      }
    }
  }

  private async send(ctx: Ctx, row: QueuedPush): Promise<Outcome> {
    let payload = JSON.parse(row.payload) as PushPayload
    if (row.message_id) {
      const current = await this.currentPayload(ctx, row.message_id)
      if (typeof current === 'string') return { kind: 'stale', why: current }
      payload = current
    }
    if (payload.actions && row.message_id) {
      // Durable before the push leaves: the notification's button must find it after a crash.
      const messageId = row.message_id
      const capability = await ctx.writes.run(async () => await mintCapability(ctx, messageId))
      if (capability) payload.capability = capability
      else delete payload.actions // answered or closed meanwhile: a plain notification
    }
    // Checked again at each send: the name may point somewhere private by now. The push then
    // goes to the address checked, never looked up again (DNS rebinding: endpoint.ts).
    let checked: CheckedEndpoint
    try {
      checked = await checkEndpoint(row.endpoint, ctx.config.pushAllowHosts ?? [], this.resolve)
    } catch (error) {
      const message = (error as Error).message
      if (/does not resolve/.test(message)) return { kind: 'retry', why: message }
      return { kind: 'drop', why: message }
    }
    let details: webpush.RequestDetails & { body: Buffer }
    try {
      details = webpush.generateRequestDetails(
        { endpoint: row.endpoint, keys: { p256dh: row.p256dh, auth: row.auth } },
        JSON.stringify(payload),
        { TTL: 24 * 3600, urgency: payload.actions ? 'high' : 'normal' },
      )
    } catch (error) {
      // Keys nothing can be encrypted to (stored before subscribe checked them) never work:
      // forget the device instead of retrying every push to it.
      if (!(await p256dhKey(row.p256dh)) || !authKey(row.auth)) {
        return { kind: 'badKeys', why: (error as Error).message }
      }
      throw error
    }
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(details.headers)) {
      if (name.toLowerCase() !== 'content-length') headers[name] = String(value)
    }
    headers.Authorization = this.vapid.authorization(row.endpoint, this.subject(ctx))
    const pinned = pinnedRequest(checked)
    headers.Host = pinned.host
    const response = await fetch(pinned.url, {
      method: 'POST',
      headers,
      tls: pinned.tls,
      body: new Uint8Array(details.body),
      // A push service answers; it does not send us elsewhere (that would dodge the host check).
      redirect: 'manual',
      signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.timeoutMs)]),
    })
    await response.arrayBuffer().catch(() => undefined)
    return outcomeOf(response)
  }

  /**
   * The payload of a message push as the message reads now, or why there is none: the message
   * was deleted, or its channel (and with it the message) is gone.
   */
  private async currentPayload(ctx: Ctx, messageId: string): Promise<PushPayload | string> {
    const message = await ctx.store.messages.byId(messageId)
    if (!message) return 'its message is gone (channel deleted)'
    if (message.deleted_at !== null || message.body === null) return 'its message was deleted'
    const channel = await ctx.store.channels.byId(message.channel_id)
    if (!channel) return 'its channel was deleted'
    const payload = messagePayload(channel, message)
    if (Buffer.byteLength(JSON.stringify(payload)) > MAX_PAYLOAD_BYTES) {
      return 'its message was edited and its payload is now too large'
    }
    return payload
  }

  /** Email reminders and expired capabilities; also called by tests after moving the clock. */
  async tickReminders(): Promise<number> {
    const ctx = this.ctx
    if (!ctx || this.stopped) return 0
    try {
      return await ctx.writes.apply(async (tx) => {
        await tx.store.push.dropExpiredCapabilities(ctx.clock.now())
        return await sendDueReminders(ctx, tx)
      })
    } catch (error) {
      ctx.log.error(`email reminders: ${(error as Error).message}`)
      return 0
    }
  }

  /** Resolves once nothing is in flight and nothing is due (tests and benchmarks). */
  async idle(timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs
    while (Date.now() < until) {
      const ctx = this.ctx
      if (!ctx) return
      const next = await ctx.store.push.nextDue()
      if (this.inflight === 0 && (next === null || next > ctx.clock.now())) return
      await Bun.sleep(5)
    }
    throw new Error('push queue did not settle')
  }
}

/** What this domain adds to the services' context (built in server/context.ts). */
declare module '../core/context.ts' {
  interface Ctx {
    /** Sends queued web pushes and email reminders, off the request path. */
    push: PushWorker
  }
}
