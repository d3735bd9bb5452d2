import { resolve } from 'node:path'
import { flagString, type ParsedArgs, UsageError } from '../cli/args.ts'

export interface Config {
  dataDir: string
  host: string
  port: number
  /** Where people reach the server; links and (later) passkey origins are built from it. */
  baseUrl: string
  /** Agent writes per minute per channel; 0 turns the limit off. */
  writeLimit: number
  /** Largest upload, in bytes. */
  maxFileSize: number
}

export const DEFAULTS = {
  dataDir: './data',
  host: '0.0.0.0',
  port: 8080,
  writeLimit: 120,
  maxFileSize: 25 * 1024 * 1024,
} as const

/** The flags of `hark serve`, each with its environment variable. */
export const SERVE_FLAGS = {
  data: 'HARK_DATA',
  host: 'HARK_HOST',
  port: 'HARK_PORT',
  'base-url': 'HARK_BASE_URL',
  'write-limit': 'HARK_WRITE_LIMIT',
  'max-file-size': 'HARK_MAX_FILE_SIZE',
} as const

type Env = Record<string, string | undefined>

/** Precedence: flag, then environment variable, then the embedded default. */
function setting(args: ParsedArgs, env: Env, flag: keyof typeof SERVE_FLAGS): string | undefined {
  return flagString(args, flag) ?? (env[SERVE_FLAGS[flag]] || undefined)
}

function integer(name: string, raw: string, min: number, max: number): number {
  const n = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || n < min || n > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max} (got "${raw}")`)
  }
  return n
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

export function dataDirFrom(args: ParsedArgs, env: Env): string {
  return resolve(setting(args, env, 'data') ?? DEFAULTS.dataDir)
}

export function loadConfig(args: ParsedArgs, env: Env): Config {
  const port = integer('port', setting(args, env, 'port') ?? String(DEFAULTS.port), 0, 65535)
  const host = setting(args, env, 'host') ?? DEFAULTS.host
  const rawBase = setting(args, env, 'base-url')
  let baseUrl: string
  if (rawBase) {
    let url: URL
    try {
      url = new URL(rawBase)
    } catch {
      throw new UsageError(`--base-url must be an absolute http(s) URL (got "${rawBase}")`)
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UsageError(`--base-url must use http or https (got "${rawBase}")`)
    }
    baseUrl = url.href.replace(/\/+$/, '')
  } else {
    baseUrl = `http://localhost:${port}`
  }
  const rawLimit = setting(args, env, 'write-limit')
  const rawSize = setting(args, env, 'max-file-size')
  return {
    dataDir: dataDirFrom(args, env),
    host,
    port,
    baseUrl,
    writeLimit:
      rawLimit === undefined ? DEFAULTS.writeLimit : integer('write-limit', rawLimit, 0, 1e9),
    maxFileSize: rawSize === undefined ? DEFAULTS.maxFileSize : parseSize('max-file-size', rawSize),
  }
}
