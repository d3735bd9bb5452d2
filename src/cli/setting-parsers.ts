import { resolve } from 'node:path'
import { type Config, DEFAULTS } from '../core/config.ts'
import { UsageError } from '../core/errors.ts'

/** The parts `SETTINGS` (settings.ts) is made of: a setting's shape and the parsers of its values. */
export type Env = Record<string, string | undefined>

/** Where a setting's value came from, for `--print-config`. */
export type Source = 'flag' | 'env' | 'file' | 'default'

/**
 * One setting: its flag, its environment variable (also its line in the config file), how the
 * text is read, and the default. Adding a setting is one entry in `SETTINGS`.
 */
export interface Setting<K extends keyof Config = keyof Config> {
  key: K
  flag: string
  env: string
  help: string
  /** Shown in `--help` and the config template. */
  defaultText: string
  /** `--flag` alone means true; the environment and the file take true/false, 1/0, yes/no. */
  boolean?: boolean
  /** Masked by `--print-config`. */
  secret?: boolean
  parse(raw: string, flag: string): Config[K]
  /** The default, given the settings resolved before this one (table order). */
  fallback(resolved: Partial<Config>): Config[K]
}

export const setting = <K extends keyof Config>(s: Setting<K>) => s as unknown as Setting

/** What a setting with its default in DEFAULTS has: its variable HARK_FLAG, the default's text. */
const fromDefaults = <
  K extends 'port' | 'writeLimit' | 'maxHeldPolls' | 'trustProxy' | 'metrics' | 'reusePort',
>(
  key: K,
  flag: string,
  help: string,
) => ({
  key,
  flag,
  env: `HARK_${flag.toUpperCase().replaceAll('-', '_')}`,
  help,
  defaultText: String(DEFAULTS[key]),
  fallback: () => DEFAULTS[key],
})

/**
 * A PEM file the server reads, unset by default: its variable HARK_FLAG, the path made absolute
 * (the server may be started from anywhere; `--print-config` shows where it will look).
 */
export const pemFile = (
  key: 'acmeCa' | 'tlsCert' | 'tlsKey',
  flag: string,
  help: string,
  defaultText = '(none)',
) =>
  setting({
    key,
    flag,
    env: `HARK_${flag.toUpperCase().replaceAll('-', '_')}`,
    help,
    defaultText,
    parse: (raw) => resolve(raw.trim()),
    fallback: () => undefined,
  })

/** A whole-number setting from 0 to `max`. */
export const wholeNumber = (
  key: 'port' | 'writeLimit' | 'maxHeldPolls',
  flag: string,
  help: string,
  max: number,
) =>
  setting({
    ...fromDefaults(key, flag, help),
    parse: (raw, name) => integer(name, raw, 0, max),
  })

/** An on/off setting: `--flag` alone turns it on. */
export const onOff = (key: 'trustProxy' | 'metrics' | 'reusePort', flag: string, help: string) =>
  setting({
    ...fromDefaults(key, flag, help),
    boolean: true,
    parse: (raw, name) => bool(name, raw),
  })

export function integer(name: string, raw: string, min: number, max: number): number {
  const n = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || n < min || n > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max} (got "${raw}")`)
  }
  return n
}

export function bool(name: string, raw: string): boolean {
  const v = raw.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false
  throw new UsageError(`--${name} must be true or false (got "${raw}")`)
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
}

/** `26214400`, `25MiB`, `25m`, `512k`. */
export function parseSize(name: string, raw: string): number {
  const m = /^\s*(\d+)\s*([a-zA-Z]*)\s*$/.exec(raw)
  const unit = m ? SIZE_UNITS[(m[2] ?? '').toLowerCase()] : undefined
  if (!m || unit === undefined || Number(m[1]) < 1) {
    throw new UsageError(
      `--${name} must be a size such as 26214400, 512KiB or 25MiB (got "${raw}")`,
    )
  }
  return Number(m[1]) * unit
}

export function smtpUrl(raw: string, flag: string): string | undefined {
  if (raw.trim() === '') return undefined
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw new UsageError(`--${flag} must be an smtp:// or smtps:// URL`)
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new UsageError(`--${flag} must be an smtp:// or smtps:// URL (got ${url.protocol}//...)`)
  }
  return url.href
}

export function baseUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(`--base-url must be an absolute http(s) URL (got "${raw}")`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--base-url must use http or https (got "${raw}")`)
  }
  return url.href.replace(/\/+$/, '')
}
