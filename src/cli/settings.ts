import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { type Config, DEFAULTS } from '../core/config.ts'
import { UsageError } from '../core/errors.ts'
import { databaseUrlSetting } from '../db/pg/url.ts'
import { s3UrlSetting as s3Url } from '../files/s3-url.ts'
import { flagString, type ParsedArgs } from './args.ts'
import {
  baseUrl,
  type Env,
  onOff,
  parseSize,
  type Setting,
  type Source,
  setting,
  smtpUrl,
  wholeNumber,
} from './setting-parsers.ts'
import {
  checkTlsSettings,
  defaultPort,
  domainNames,
  HTTP_PORT,
  httpsBaseUrl,
  TLS_SETTINGS,
} from './tls-settings.ts'

export { parseSize, type Setting, type Source }

/** Every setting of `hark serve`, in resolution order (a default may use earlier values). */
export const SETTINGS: readonly Setting[] = [
  setting({
    key: 'dataDir',
    flag: 'data',
    env: 'HARK_DATA',
    help: 'data directory (database, files)',
    defaultText: './data',
    parse: (raw) => resolve(raw),
    fallback: () => resolve(DEFAULTS.dataDir),
  }),
  setting({
    key: 'host',
    flag: 'host',
    env: 'HARK_HOST',
    help: 'address to listen on',
    defaultText: DEFAULTS.host,
    parse: (raw) => raw.trim(),
    fallback: () => DEFAULTS.host,
  }),
  ...TLS_SETTINGS,
  {
    ...wholeNumber('port', 'port', 'port to listen on', 65535),
    defaultText: '8080; 443 with --domain or --tls-cert',
    fallback: defaultPort,
  },
  HTTP_PORT,
  setting({
    key: 'baseUrl',
    flag: 'base-url',
    env: 'HARK_BASE_URL',
    help: 'public URL people use (links, setup)',
    defaultText: 'http://localhost:PORT; https://DOMAIN with --domain',
    parse: baseUrl,
    fallback: (c) => defaultBaseUrl(c.domains, c.tlsCert, c.port),
  }),
  wholeNumber('writeLimit', 'write-limit', 'agent writes/minute/channel, 0 = off', 1e9),
  wholeNumber(
    'maxHeldPolls',
    'max-held-polls',
    'long-polls held at once per token or browser session, 0 = no bound',
    1e9,
  ),
  setting({
    key: 'maxFileSize',
    flag: 'max-file-size',
    env: 'HARK_MAX_FILE_SIZE',
    help: 'largest upload (26214400, 512k, 25MiB)',
    defaultText: '25MiB',
    parse: (raw, flag) => parseSize(flag, raw),
    fallback: () => DEFAULTS.maxFileSize,
  }),
  setting({
    key: 's3Url',
    flag: 's3-url',
    env: 'HARK_S3_URL',
    help: 'keep files in S3 (s3://KEY:SECRET@host[:port]/bucket[/prefix][?region=R&tls=false])',
    defaultText: '(none: files in the data directory)',
    secret: true,
    parse: s3Url,
    fallback: () => undefined,
  }),
  setting({
    key: 'databaseUrl',
    flag: 'database-url',
    env: 'HARK_DATABASE_URL',
    help: 'Postgres: records shared by every instance (postgres://USER:PASSWORD@host[:port]/db), docs/scaling.md',
    defaultText: '(none: SQLite in the data directory)',
    secret: true,
    parse: databaseUrlSetting,
    fallback: () => undefined,
  }),
  onOff('trustProxy', 'trust-proxy', 'believe X-Forwarded-For (only behind a proxy)'),
  onOff(
    'reusePort',
    'reuse-port',
    'share the port with other instances on this machine (Postgres)',
  ),
  setting({
    key: 'smtpUrl',
    flag: 'smtp-url',
    env: 'HARK_SMTP_URL',
    help: 'SMTP server for email codes (smtp[s]://user:pass@host:port)',
    defaultText: '(none: no email)',
    secret: true,
    parse: smtpUrl,
    fallback: () => undefined,
  }),
  setting({
    key: 'smtpFrom',
    flag: 'smtp-from',
    env: 'HARK_SMTP_FROM',
    help: 'sender address of Hark mail',
    defaultText: 'hark@<base URL host>',
    parse: (raw) => raw.trim(),
    fallback: (c) => `hark@${new URL(c.baseUrl ?? 'http://localhost').hostname}`,
  }),
  onOff('metrics', 'metrics', 'serve GET /metrics (Prometheus text format)'),
  setting({
    key: 'metricsToken',
    flag: 'metrics-token',
    env: 'HARK_METRICS_TOKEN',
    help: 'bearer token /metrics asks for (without one: only from this machine, no proxy)',
    defaultText: '(none)',
    secret: true,
    parse: (raw, flag) => {
      const token = raw.trim()
      if (token.length < 16) throw new UsageError(`--${flag} must be at least 16 characters`)
      return token
    },
    fallback: () => undefined,
  }),
  setting({
    key: 'logFormat',
    flag: 'log-format',
    env: 'HARK_LOG_FORMAT',
    help: 'text (a line per event) or json (an object per line)',
    defaultText: DEFAULTS.logFormat,
    parse: (raw, flag) => {
      const v = raw.trim().toLowerCase()
      if (v !== 'text' && v !== 'json') {
        throw new UsageError(`--${flag} must be text or json (got "${raw}")`)
      }
      return v
    },
    fallback: () => DEFAULTS.logFormat,
  }),
  setting({
    key: 'pushAllowHosts',
    flag: 'push-allow-hosts',
    env: 'HARK_PUSH_ALLOW_HOSTS',
    help: 'push endpoint hosts allowed though private or http (host[:port],...)',
    defaultText: '(none: public https push services only)',
    parse: (raw) =>
      raw
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter((h) => h !== ''),
    fallback: () => [],
  }),
]

/** The config file's own flag and variable. */
export const CONFIG_FLAG = 'config'
export const CONFIG_ENV = 'HARK_CONFIG'
/** Read when neither `--config` nor `HARK_CONFIG` names a file, and only if it exists. */
export const DEFAULT_CONFIG_FILE = '/etc/hark/hark.env'

/** Flags `hark serve` takes: every setting, plus `--config FILE` and `--print-config`. */
export const SERVE_VALUED = [CONFIG_FLAG, ...SETTINGS.filter((s) => !s.boolean).map((s) => s.flag)]
export const SERVE_BOOLEANS = [
  'print-config',
  'check',
  ...SETTINGS.filter((s) => s.boolean).map((s) => s.flag),
]

/**
 * Reads a systemd-style environment file: `NAME=value` lines, `#` comments, blank lines, and
 * values optionally wrapped in single or double quotes. Only known `HARK_` names are allowed, so
 * a typo is an error instead of a silently ignored line.
 */
export function parseEnvFile(text: string, path: string): Map<string, string> {
  const known = new Set(SETTINGS.map((s) => s.env))
  const values = new Map<string, string>()
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) return
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line)
    if (!m) throw new UsageError(`${path}:${i + 1}: expected NAME=value, got "${line}"`)
    const name = m[1] as string
    let value = m[2] as string
    const quoted = /^(["'])(.*)\1$/.exec(value)
    if (quoted) value = quoted[2] as string
    if (!known.has(name)) {
      throw new UsageError(
        `${path}:${i + 1}: unknown setting ${name} (known: ${[...known].join(', ')})`,
      )
    }
    values.set(name, value)
  })
  return values
}

export interface Resolved {
  config: Config
  sources: Record<keyof Config, Source>
  /** The config file that was read, if any. */
  file?: string
}

export interface LoadOptions {
  /** The file read when none is named; tests point it elsewhere. */
  defaultFile?: string
}

function configFile(
  args: ParsedArgs,
  env: Env,
  options: LoadOptions,
): { path?: string; values: Map<string, string> } {
  const named = flagString(args, CONFIG_FLAG) ?? (env[CONFIG_ENV] || undefined)
  const path = named ?? options.defaultFile ?? DEFAULT_CONFIG_FILE
  if (!named && !existsSync(path)) return { values: new Map() }
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(
      `cannot read the config file ${path} (${(error as NodeJS.ErrnoException).code ?? error})`,
    )
  }
  return { path, values: parseEnvFile(text, path) }
}

/**
 * Resolves every setting. Precedence, highest first: the flag, the environment variable, the
 * config file (`--config FILE`, else `$HARK_CONFIG`, else `/etc/hark/hark.env` if it exists),
 * the default. An empty environment variable counts as unset.
 */
export function resolveConfig(args: ParsedArgs, env: Env, options: LoadOptions = {}): Resolved {
  const file = configFile(args, env, options)
  const config: Partial<Config> = {}
  const sources = {} as Record<keyof Config, Source>
  for (const s of SETTINGS) {
    const flag = args.flags.get(s.flag)
    const envValue = env[s.env] || undefined
    const fileValue = file.values.get(s.env)
    let value: unknown
    if (flag !== undefined) {
      value = flag === true ? true : s.parse(flag, s.flag)
      sources[s.key] = 'flag'
    } else if (envValue !== undefined) {
      value = s.parse(envValue, s.flag)
      sources[s.key] = 'env'
    } else if (fileValue !== undefined && fileValue !== '') {
      value = s.parse(fileValue, s.flag)
      sources[s.key] = 'file'
    } else {
      value = s.fallback(config)
      sources[s.key] = 'default'
    }
    ;(config as Record<string, unknown>)[s.key] = value
  }
  checkTlsSettings(config as Config)
  return { config: config as Config, sources, file: file.path }
}

export function loadConfig(args: ParsedArgs, env: Env, options: LoadOptions = {}): Config {
  return resolveConfig(args, env, options).config
}

/**
 * Reads single settings by the same precedence (flag, environment, config file), unparsed, for
 * the admin commands that need one or two: an unrelated bad setting must not stop them.
 */
function settingReader(args: ParsedArgs, env: Env, options: LoadOptions) {
  const file = configFile(args, env, options)
  return (flag: string, name: string): string | undefined =>
    flagString(args, flag) ?? (env[name] || undefined) ?? (file.values.get(name) || undefined)
}

/** A setting an admin command reads alone, and whether anything named it (else: the default). */
export interface Named<T> {
  value: T
  named: boolean
}

/**
 * The data directory alone (what every admin command needs), and whether --data, HARK_DATA or
 * the config file named it: the default (./data) is where the server keeps data only when it
 * was started in that same directory with no setting at all.
 */
export function dataDirFrom(args: ParsedArgs, env: Env, options: LoadOptions = {}): Named<string> {
  const raw = settingReader(args, env, options)('data', 'HARK_DATA')
  return { value: resolve(raw || DEFAULTS.dataDir), named: raw !== undefined }
}

/** The public base URL alone (the links admin commands print), and whether it was set. */
export function baseUrlFrom(args: ParsedArgs, env: Env, options: LoadOptions = {}): Named<string> {
  const from = settingReader(args, env, options)
  const raw = from('base-url', 'HARK_BASE_URL')
  if (raw !== undefined) return { value: baseUrl(raw), named: true }
  const domain = from('domain', 'HARK_DOMAIN')
  const domains = domain === undefined ? undefined : domainNames(domain, 'domain')
  const tlsCert = from('tls-cert', 'HARK_TLS_CERT')
  const port = from('port', 'HARK_PORT')
  return {
    value: defaultBaseUrl(domains, tlsCert, port === undefined ? undefined : Number(port)),
    named: domains !== undefined,
  }
}

/**
 * Where people reach a server whose base URL is not set: its domain over https, or this
 * machine (https with an own certificate).
 */
function defaultBaseUrl(
  domains: string[] | undefined,
  tlsCert: string | undefined,
  port: number | undefined,
): string {
  if (domains) return httpsBaseUrl(domains[0] as string, port ?? 443)
  if (tlsCert) return httpsBaseUrl('localhost', port ?? 443)
  return `http://localhost:${port ?? DEFAULTS.port}`
}

/** An optional setting read alone, checked as `hark serve` checks it; undefined when none is set. */
const optionalAlone =
  <T>(flag: string, name: string, check: (raw: string, flag: string) => T) =>
  (args: ParsedArgs, env: Env, options: LoadOptions = {}): T | undefined => {
    const raw = settingReader(args, env, options)(flag, name)
    return raw === undefined ? undefined : check(raw, flag)
  }

/** The S3 URL alone: `hark admin backup` must know the files are not in the data directory. */
export const s3UrlFrom = optionalAlone('s3-url', 'HARK_S3_URL', s3Url)

/** The Postgres URL alone (`hark admin migrate-to`). */
export const databaseUrlFrom = optionalAlone(
  'database-url',
  'HARK_DATABASE_URL',
  databaseUrlSetting,
)

const show = (s: Setting, value: unknown): string => {
  if (s.secret && value !== undefined && value !== '') return '********'
  if (value === undefined) return ''
  return String(value)
}

/**
 * `hark serve --print-config`: the effective settings as lines of a config file, each with its
 * source, secrets masked. The output can be pasted into `/etc/hark/hark.env`.
 */
export function printConfig(resolved: Resolved, settings: readonly Setting[] = SETTINGS): string {
  const lines = [
    `# effective configuration; config file: ${resolved.file ?? '(none)'}`,
    '# precedence: flag > environment > config file > default',
  ]
  for (const s of settings) {
    lines.push(`${s.env}=${show(s, resolved.config[s.key])}  # ${resolved.sources[s.key]}`)
  }
  return lines.join('\n')
}

/** The settings part of `hark serve --help`. */
export function settingsHelp(): string {
  const rows = SETTINGS.map((s) => [
    `--${s.flag}${s.boolean ? '' : ` ${s.flag === 'data' ? 'DIR' : 'VALUE'}`}`,
    s.help,
    s.env,
    s.defaultText,
  ])
  const width = (i: number) => Math.max(...rows.map((r) => (r[i] as string).length))
  return rows
    .map((r) =>
      `  ${r
        .slice(0, 3)
        .map((c, i) => c.padEnd(width(i)))
        .join('  ')}  ${r[3]}`.trimEnd(),
    )
    .join('\n')
}
