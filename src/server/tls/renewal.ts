import type { Clock } from '../../core/clock.ts'
import type { Logger } from '../../core/log.ts'
import { OrderError } from './acme.ts'
import { type Certificate, covers, renewalTime } from './certificate.ts'
import type { CertificateFiles } from './store.ts'

/**
 * Keeps a certificate for the names of `--domain`: the saved one at start when it still
 * serves (no second order for a valid certificate), a new one when there is none or it is
 * due, renewed in the background before it ends, each new one saved and handed to `onCertificate`
 * (the listener swaps it in). A failed order is one log line, the certificate in use stays,
 * and the next try waits longer (the CA's Retry-After when it gave one): never a crash, never
 * a loop.
 */
export interface RenewalOptions {
  names: string[]
  files: CertificateFiles
  order(names: string[]): Promise<Certificate>
  onCertificate(certificate: Certificate): void
  clock: Clock
  log: Logger
  /** How long before the end to renew (default 30 days; at most a third of the lifetime). */
  renewBeforeMs?: number
}

/**
 * Waits after the 1st, 2nd, ... failed order in a row. Let's Encrypt allows 5 failed
 * validations per name per hour: this schedule makes at most 4 in the first hour.
 */
export const RETRY_DELAYS_MS = [
  60_000,
  5 * 60_000,
  20 * 60_000,
  60 * 60_000,
  3 * 3600_000,
  6 * 3600_000,
  12 * 3600_000,
]
/** A scheduled check never sleeps longer than this (timers drift; the clock may be set). */
const LONGEST_SLEEP_MS = 12 * 3600_000

export class Renewal {
  private current: Certificate | undefined
  private failures = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private ordering: Promise<void> | undefined
  private stopped = false
  /** When the next order or check is due (ms), for logs and tests. */
  nextCheck = 0

  constructor(private readonly options: RenewalOptions) {}

  get certificate(): Certificate | undefined {
    return this.current
  }

  /** Loads the saved certificate; returns it when it serves the names and is not due. */
  start(): Certificate | undefined {
    const { files, names, log, clock } = this.options
    const saved = files.load()
    if (saved && names.every((n) => covers(saved, n)) && saved.notAfter > clock.now()) {
      this.current = saved
      log.info(
        `TLS: using the certificate for ${saved.names.join(', ')} in ${files.dir} (serial ${saved.serial}, valid until ${iso(saved.notAfter)})`,
      )
    } else if (saved) {
      log.info(
        `TLS: the certificate in ${files.dir} does not serve ${names.join(', ')} now; ordering a new one`,
      )
    }
    this.schedule()
    return this.current
  }

  /** Orders now, whatever the dates say (an operator's renewal, a test's). */
  renewNow(): Promise<void> {
    return this.runOrder()
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
  }

  /** Resolves once any order in flight has ended (stop waits for it, a test awaits it). */
  async settled(): Promise<void> {
    await this.ordering
  }

  private due(): number {
    if (!this.current) return this.options.clock.now()
    return renewalTime(this.current, this.options.renewBeforeMs)
  }

  private schedule(at = this.due()): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.nextCheck = at
    const wait = Math.max(0, Math.min(at - this.options.clock.now(), LONGEST_SLEEP_MS))
    this.timer = setTimeout(() => {
      if (this.options.clock.now() >= this.due()) void this.runOrder()
      else this.schedule()
    }, wait)
    // A pending renewal never keeps a stopping process alive.
    this.timer.unref?.()
  }

  private runOrder(): Promise<void> {
    this.ordering ??= this.order().finally(() => {
      this.ordering = undefined
    })
    return this.ordering
  }

  private async order(): Promise<void> {
    const { names, log, clock } = this.options
    log.info(`TLS: ordering a certificate for ${names.join(', ')}`)
    const started = clock.now()
    try {
      const certificate = await this.options.order(names)
      if (this.stopped) return
      this.options.files.save(certificate)
      this.current = certificate
      this.failures = 0
      this.options.onCertificate(certificate)
      log.info(
        `TLS: obtained a certificate for ${certificate.names.join(', ')} in ${((clock.now() - started) / 1000).toFixed(1)} s (serial ${certificate.serial}, valid until ${iso(certificate.notAfter)}, renewal from ${iso(renewalTime(certificate, this.options.renewBeforeMs))})`,
      )
      this.schedule()
    } catch (error) {
      if (this.stopped) return
      const reason =
        error instanceof OrderError ? error.message : String((error as Error)?.message ?? error)
      const delay = RETRY_DELAYS_MS[Math.min(this.failures, RETRY_DELAYS_MS.length - 1)] as number
      this.failures++
      const retryAfter = error instanceof OrderError ? error.retryAfter : undefined
      const next = Math.max(clock.now() + delay, retryAfter ?? 0)
      const keeping = this.current
        ? `still serving the certificate valid until ${iso(this.current.notAfter)}`
        : 'HTTPS waits until one is obtained'
      log.error(
        `TLS: could not obtain a certificate for ${names.join(', ')}: ${reason}; ${keeping}; next try at ${iso(next)}`,
      )
      this.schedule(next)
    }
  }
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
