/**
 * What the server runs with, and the defaults of its settings. Only types and values live
 * here: reading them from flags, the environment and a config file is `hark serve`'s part
 * (src/cli/settings.ts), so the server never depends on its command line.
 */
export interface Config {
  dataDir: string
  host: string
  port: number
  /** Where people reach the server; links and (later) passkey origins are built from it. */
  baseUrl: string
  /** Agent writes per minute per channel; 0 turns the limit off. */
  writeLimit: number
  /**
   * Long-polls one token or browser session holds at once; at the bound its oldest is answered
   * early (core/holds.ts). 0 turns the bound off. Unset: MAX_HELD_POLLS (20).
   */
  maxHeldPolls?: number
  /** Largest upload, in bytes. */
  maxFileSize: number
  /**
   * Believe the last `X-Forwarded-For` entry (the one a reverse proxy in front of Hark adds).
   * Off unless set: a client talking to Hark directly could otherwise claim any address.
   */
  trustProxy?: boolean
  /** Where email goes out (`smtp://user:pass@host:587`, `smtps://...`); unset: no email. */
  smtpUrl?: string
  /** The sender of Hark's mail. */
  smtpFrom?: string
  /**
   * Hosts (`host` or `host:port`) that push endpoints may name although they are not public
   * https push services: a self-hosted push service on the LAN, a test's local receiver.
   */
  pushAllowHosts?: string[]
  /** Serve `GET /metrics` (Prometheus text format). */
  metrics?: boolean
  /**
   * Listen with SO_REUSEPORT, so several instances on one machine (on a shared Postgres) take
   * one port and the kernel spreads the connections (docs/scaling.md).
   */
  reusePort?: boolean
  /** A bearer token `/metrics` asks for; without one, only this machine may read it. */
  metricsToken?: string
  /** `text` (a line per event) or `json` (an object per line). */
  logFormat?: 'text' | 'json'
  /**
   * Keep files in an S3 bucket instead of the data directory
   * (`s3://KEY:SECRET@host[:port]/bucket[/prefix][?region=...&tls=false]`, src/files/s3-url.ts).
   */
  s3Url?: string
  /**
   * A Postgres database (`postgres://...`, src/db/pg/url.ts): read by
   * `hark admin migrate-to`; `hark serve` refuses it until its stores run on Postgres.
   */
  databaseUrl?: string
  /** Longest pause in an upload's body before it is cut (408); not a flag: tests shorten it. */
  uploadStallMs?: number
  /**
   * `--domain`: the names to obtain a certificate for from an ACME CA and serve over HTTPS on
   * `port` (443), with `httpPort` (80) answering the CA's challenges and redirecting
   * (src/server/tls/, docs/operations.md "HTTPS").
   */
  domains?: string[]
  /** The ACME directory (Let's Encrypt's by default). */
  acmeDirectory?: string
  /** The contact the CA writes to about expiring certificates. */
  acmeEmail?: string
  /** A CA certificate file to trust for the ACME directory itself (a private ACME CA). */
  acmeCa?: string
  /** `--tls-cert` / `--tls-key`: serve HTTPS with the operator's own certificate. */
  tlsCert?: string
  tlsKey?: string
  /** The plain-HTTP port that redirects to HTTPS (and answers challenges); unset: none. */
  httpPort?: number
  /**
   * Not flags: how long before the end a certificate is renewed, how often own files are
   * checked, how long a replaced listener drains (src/server/tls/listener.ts).
   */
  acmeRenewBeforeMs?: number
  tlsCheckMs?: number
  tlsDrainMs?: number
}

export const DEFAULTS = {
  dataDir: './data',
  host: '0.0.0.0',
  port: 8080,
  writeLimit: 120,
  maxHeldPolls: 20,
  maxFileSize: 25 * 1024 * 1024,
  trustProxy: false,
  metrics: false,
  reusePort: false,
  logFormat: 'text',
} as const
