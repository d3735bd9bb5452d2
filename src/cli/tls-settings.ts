import type { Config } from '../core/config.ts'
import { UsageError } from '../core/errors.ts'
import { LETS_ENCRYPT } from '../server/tls/acme-directory.ts'
import { integer, pemFile, type Setting, setting } from './setting-parsers.ts'

/**
 * The HTTPS settings of `hark serve` (docs/operations.md "HTTPS"): `--domain` obtains and renews
 * a certificate by itself, `--tls-cert`/`--tls-key` serve the operator's own. They come before
 * `--port` in the table: with either, the port defaults to 443 and the base URL to https.
 */
export const TLS_SETTINGS: readonly Setting[] = [
  setting({
    key: 'domains',
    flag: 'domain',
    env: 'HARK_DOMAIN',
    help: "obtain an HTTPS certificate for these names (ACME, Let's Encrypt) and serve on 443 and 80",
    defaultText: '(none)',
    parse: domainNames,
    fallback: () => undefined,
  }),
  setting({
    key: 'acmeDirectory',
    flag: 'acme-directory',
    env: 'HARK_ACME_DIRECTORY',
    help: 'ACME directory URL of the CA for --domain',
    defaultText: "Let's Encrypt",
    parse: (raw, flag) => {
      const url = URL.canParse(raw.trim()) ? new URL(raw.trim()) : undefined
      if (url?.protocol !== 'https:') {
        throw new UsageError(`--${flag} must be an https:// URL (got "${raw}")`)
      }
      return (url as URL).href
    },
    fallback: () => LETS_ENCRYPT,
  }),
  setting({
    key: 'acmeEmail',
    flag: 'acme-email',
    env: 'HARK_ACME_EMAIL',
    help: 'contact address the CA may write to about the certificate',
    defaultText: '(none)',
    parse: (raw, flag) => {
      const email = raw.trim()
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
        throw new UsageError(`--${flag} must be an email address (got "${raw}")`)
      }
      return email
    },
    fallback: () => undefined,
  }),
  pemFile(
    'acmeCa',
    'acme-ca',
    'CA certificate (PEM file) to trust for the ACME directory (a private CA)',
    "(the system's)",
  ),
  pemFile(
    'tlsCert',
    'tls-cert',
    'serve HTTPS with this certificate chain (PEM file; reloaded when it changes)',
  ),
  pemFile('tlsKey', 'tls-key', 'the private key of --tls-cert (PEM file)'),
]

/** `--port`'s default: 443 when Hark serves HTTPS itself, else 8080. */
export const defaultPort = (c: Partial<Config>) => (c.domains || c.tlsCert ? 443 : 8080)

/** `--http-port`: 80 with `--domain` (the CA's challenges come there), else none. */
export const HTTP_PORT: Setting = setting({
  key: 'httpPort',
  flag: 'http-port',
  env: 'HARK_HTTP_PORT',
  help: 'plain-HTTP port that redirects to HTTPS and answers ACME challenges ("off": none)',
  defaultText: '80 with --domain, else off',
  parse: (raw, flag) => (raw.trim() === 'off' ? undefined : integer(flag, raw, 0, 65535)),
  fallback: (c) => (c.domains ? 80 : undefined),
})

/** `https://NAME` for `--domain`, with the port when it is not 443. */
export const httpsBaseUrl = (name: string, port: number | undefined) =>
  `https://${name}${port === undefined || port === 443 ? '' : `:${port}`}`

/**
 * Host names for `--domain`: comma-separated DNS names (IDNs in their ASCII form), no
 * addresses, no wildcards (HTTP-01 cannot prove one), no ports.
 */
export function domainNames(raw: string, flag: string): string[] {
  const names = raw
    .split(',')
    .map((n) => n.trim().toLowerCase().replace(/\.$/, ''))
    .filter((n) => n !== '')
  if (names.length === 0) throw new UsageError(`--${flag} needs at least one host name`)
  for (const name of names) {
    if (name.startsWith('*.')) {
      throw new UsageError(
        `--${flag}: ${name} is a wildcard, which HTTP-01 cannot prove; name each host, or use --tls-cert`,
      )
    }
    if (/^[0-9.]+$/.test(name) || name.includes(':')) {
      throw new UsageError(`--${flag}: ${name} is an address or has a port; give a host name`)
    }
    const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/
    if (name.length > 253 || !name.includes('.') || !name.split('.').every((l) => label.test(l))) {
      throw new UsageError(`--${flag}: "${name}" is not a host name such as hark.example.com`)
    }
  }
  return [...new Set(names)]
}

/** Settings that only make sense together, checked once every setting is known. */
export function checkTlsSettings(config: Config): void {
  if (config.domains && (config.tlsCert || config.tlsKey)) {
    throw new UsageError(
      '--domain obtains a certificate itself: give it or --tls-cert/--tls-key, not both',
    )
  }
  if (Boolean(config.tlsCert) !== Boolean(config.tlsKey)) {
    throw new UsageError('--tls-cert and --tls-key go together')
  }
  if (config.domains && config.databaseUrl) {
    throw new UsageError(
      '--domain is for one instance; several instances on Postgres sit behind a proxy or load balancer that serves HTTPS (docs/scaling.md), or use --tls-cert/--tls-key on each',
    )
  }
  if (config.domains && config.httpPort === undefined) {
    throw new UsageError('--domain needs --http-port: the CA checks its challenge over plain HTTP')
  }
  if (config.httpPort !== undefined && !config.domains && !config.tlsCert) {
    throw new UsageError('--http-port redirects to HTTPS: it needs --domain or --tls-cert')
  }
}
