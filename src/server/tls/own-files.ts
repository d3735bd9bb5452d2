import { readFileSync, statSync } from 'node:fs'
import type { Logger } from '../../core/log.ts'
import { type Certificate, CertificateError, readCertificate } from './certificate.ts'

/**
 * `--tls-cert FILE --tls-key FILE`: the operator's own certificate (from certbot, a company CA,
 * Tailscale's `tailscale cert`), read at start and again when either file changes (checked
 * every few seconds: certbot and Kubernetes replace files by renaming, which a watch on the
 * file would lose) or on SIGHUP. A pair caught half-written, or any bad pair, is one log line
 * and the certificate in use stays.
 */
export class OwnCertificate {
  private stamp: string
  private timer: ReturnType<typeof setInterval> | undefined
  current: Certificate

  constructor(
    private readonly certFile: string,
    private readonly keyFile: string,
    private readonly log: Logger,
    private readonly onCertificate: (certificate: Certificate) => void,
  ) {
    this.stamp = this.stampNow()
    this.current = this.read()
  }

  /** Checks the files every `everyMs`. */
  watch(everyMs: number): void {
    this.timer = setInterval(() => {
      if (this.stampNow() !== this.stamp) this.reload('changed')
    }, everyMs)
    this.timer.unref?.()
  }

  stop(): void {
    clearInterval(this.timer)
  }

  /** Reads the files again now; true when a new certificate is served. */
  reload(why: string): boolean {
    this.stamp = this.stampNow()
    let next: Certificate
    try {
      next = this.read()
    } catch (error) {
      this.log.error(
        `TLS: ${why}: cannot use ${this.certFile} and ${this.keyFile}: ${(error as Error).message}; still serving serial ${this.current.serial}, valid until ${new Date(this.current.notAfter).toISOString()}`,
      )
      return false
    }
    if (next.serial === this.current.serial && next.cert === this.current.cert) return false
    this.current = next
    this.onCertificate(next)
    this.log.info(
      `TLS: ${why}: serving the certificate in ${this.certFile} (serial ${next.serial}, ${next.names.join(', ') || 'no DNS names'}, valid until ${new Date(next.notAfter).toISOString()})`,
    )
    return true
  }

  private read(): Certificate {
    const read = (path: string) => {
      try {
        return readFileSync(path, 'utf8')
      } catch (error) {
        throw new CertificateError(
          `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? error})`,
        )
      }
    }
    return readCertificate(read(this.certFile), read(this.keyFile))
  }

  /** What changes when either file is written or replaced. */
  private stampNow(): string {
    return [this.certFile, this.keyFile]
      .map((path) => {
        try {
          const s = statSync(path)
          return `${s.ino}:${s.size}:${s.mtimeMs}`
        } catch {
          return 'missing'
        }
      })
      .join('|')
  }
}
