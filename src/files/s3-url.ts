/**
 * `--s3-url` / `HARK_S3_URL`: where files go when they are kept in S3, as one URL so it fits a
 * flag, a variable and a config-file line alike:
 *
 *   s3://ACCESS_KEY:SECRET@HOST[:PORT]/BUCKET[/PREFIX][?region=REGION&tls=false]
 *
 * The key and secret are percent-encoded when they hold `:`, `/`, `@` or `%`. Without them,
 * Bun reads `S3_ACCESS_KEY_ID`/`AWS_ACCESS_KEY_ID` and their secrets from the environment.
 * `tls=false` talks plain http (a local MinIO, a test); https otherwise. Only the parsing lives
 * here (no Bun, no I/O), so `hark serve` can refuse a bad URL before opening anything.
 */
import { UsageError } from '../core/errors.ts'
import { serviceUrl } from '../core/service-url.ts'

export interface S3Location {
  endpoint: string
  bucket: string
  /** Put before every key: `''` or ends with `/`. */
  prefix: string
  region: string
  accessKeyId?: string
  secretAccessKey?: string
}

export const S3_URL_FORM =
  's3://ACCESS_KEY:SECRET@HOST[:PORT]/BUCKET[/PREFIX][?region=REGION&tls=false]'

/** Throws an `Error` saying what is wrong; the message never repeats the secret. */
export function parseS3Url(raw: string): S3Location {
  const url = serviceUrl(raw, ['s3'])
  const [bucket = '', ...rest] = url.pathname.replace(/^\/+/, '').split('/')
  // S3's own bucket naming rule: 3 to 63 lower-case letters, digits, dots and hyphens.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new Error(bucket === '' ? 'it names no bucket' : `"${bucket}" is not a bucket name`)
  }
  const prefix = rest.filter((p) => p !== '').join('/')
  if (!/^[A-Za-z0-9._/-]*$/.test(prefix)) {
    throw new Error('the prefix may hold only letters, digits and . _ - /')
  }
  for (const key of url.searchParams.keys()) {
    if (key !== 'region' && key !== 'tls') throw new Error(`unknown parameter "${key}"`)
  }
  const tls = url.searchParams.get('tls') ?? 'true'
  if (tls !== 'true' && tls !== 'false') throw new Error('tls must be true or false')
  const user = decode(url.username, 'access key')
  const secret = decode(url.password, 'secret')
  if ((user === '') !== (secret === '')) {
    throw new Error('give both the access key and the secret, or neither')
  }
  return {
    endpoint: `${tls === 'true' ? 'https' : 'http'}://${url.host}`,
    bucket,
    prefix: prefix === '' ? '' : `${prefix}/`,
    region: url.searchParams.get('region') || 'us-east-1',
    ...(user !== '' && { accessKeyId: user, secretAccessKey: secret }),
  }
}

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    throw new Error(`the ${what} is not properly percent-encoded`)
  }
}

/** The URL without its secret, for logs and errors. */
export const describeS3 = (s: S3Location) => `${s.endpoint}/${s.bucket}/${s.prefix}`

/**
 * The setting's parser (src/cli/settings.ts): checked as it is read, so a bad URL stops
 * `hark serve` before anything is opened. Empty means unset.
 */
export function s3UrlSetting(raw: string, flag: string): string | undefined {
  if (raw.trim() === '') return undefined
  try {
    parseS3Url(raw)
  } catch (error) {
    // The parser's reasons never quote the key or the secret.
    throw new UsageError(`--${flag} must be ${S3_URL_FORM}: ${(error as Error).message}`)
  }
  return raw.trim()
}
