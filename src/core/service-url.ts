/**
 * A URL that names a service with its credentials in it (SMTP, S3, Postgres), parsed and held to
 * what every such setting needs: one of `schemes`, and a host. The checks that differ (a bucket,
 * a database, the parameters) stay with each parser. Throws an `Error` saying what is wrong,
 * never repeating the URL: it may hold a password.
 */
export function serviceUrl(raw: string, schemes: readonly string[]): URL {
  const url = URL.parse(raw.trim())
  if (!url) throw new Error('it is not a URL')
  if (!schemes.some((s) => url.protocol === `${s}:`)) {
    const allowed = schemes.map((s) => `${s}://`).join(' or ')
    throw new Error(`it must start with ${allowed} (got ${url.protocol}//)`)
  }
  if (url.hostname === '') throw new Error('it names no host')
  return url
}
