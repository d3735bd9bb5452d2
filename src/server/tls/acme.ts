import { Agent } from 'node:https'
import acme from 'acme-client'
import { type Certificate, readCertificate } from './certificate.ts'
import type { CertificateFiles } from './store.ts'

export { LETS_ENCRYPT } from './acme-directory.ts'

/**
 * The HTTP-01 challenges being answered: token → key authorization. The port-80 listener
 * reads it (`/.well-known/acme-challenge/TOKEN`); an order writes and clears it.
 */
export type Challenges = Map<string, string>

export interface AcmeOptions {
  directory: string
  email?: string
  /** A CA certificate (PEM) to trust for the directory's own HTTPS: a private ACME CA. */
  directoryCa?: string
  files: CertificateFiles
  challenges: Challenges
}

/** A failed order: what the CA or the network said, and when the CA asked us to come back. */
export class OrderError extends Error {
  constructor(
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message)
  }
}

/** Each request to the CA gives up after this long: an order never hangs on a silent CA. */
const REQUEST_TIMEOUT_MS = 30_000
/** And a whole order (account, authorizations, polling, download) after this long. */
const ORDER_TIMEOUT_MS = 3 * 60_000

/**
 * Orders a certificate for `names` with HTTP-01 challenges, through acme-client (RFC 8555).
 * A new P-256 key per certificate; the account key is made once and kept in DATA/tls.
 */
export async function orderCertificate(
  options: AcmeOptions,
  names: string[],
): Promise<Certificate> {
  // acme-client's own HTTP client: a timeout per request, and the private CA when one is named.
  acme.axios.defaults.timeout = REQUEST_TIMEOUT_MS
  // No retries inside acme-client (up to 75 s for a refused connection, or a sleep of the CA's
  // Retry-After inside the order): a failed order is retried by `Renewal`, whose backoff
  // honours Retry-After and says so in the log.
  ;(acme.axios.defaults as { acmeSettings?: { retryMaxAttempts: number } }).acmeSettings = {
    ...(acme.axios.defaults as { acmeSettings?: object }).acmeSettings,
    retryMaxAttempts: 0,
  }
  acme.axios.defaults.httpsAgent = options.directoryCa
    ? new Agent({ ca: options.directoryCa, keepAlive: false })
    : undefined
  await reachDirectory(options)
  const accountKey = await options.files.accountKey(async () =>
    (await acme.crypto.createPrivateEcdsaKey()).toString(),
  )
  const client = new acme.Client({
    directoryUrl: options.directory,
    accountKey,
    accountUrl: options.files.accountUrl(options.directory),
  })
  const [key, csr] = await acme.crypto.createCsr(
    { commonName: names[0], altNames: names },
    await acme.crypto.createPrivateEcdsaKey(),
  )
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OrderError(`no answer within ${ORDER_TIMEOUT_MS / 60_000} minutes`)),
      ORDER_TIMEOUT_MS,
    )
  })
  try {
    const chain = await Promise.race([
      client.auto({
        csr,
        email: options.email,
        termsOfServiceAgreed: true,
        challengePriority: ['http-01'],
        // The CA checks the challenge itself; a check from this box first would fail behind
        // NAT without hairpinning, where the CA's own check succeeds.
        skipChallengeVerification: true,
        challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
          options.challenges.set(challenge.token, keyAuthorization)
        },
        challengeRemoveFn: async (_authz, challenge) => {
          options.challenges.delete(challenge.token)
        },
      }),
      timedOut,
    ])
    options.files.saveAccountUrl(options.directory, client.getAccountUrl())
    return readCertificate(chain, key.toString())
  } catch (error) {
    throw asOrderError(error, options.directory)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Reads the directory first: acme-client loses the reason of a failed connection (it reports
 * a TypeError of its own), and "cannot reach" with the network's code is what an operator
 * needs to read.
 */
async function reachDirectory(options: AcmeOptions): Promise<void> {
  let answer: Response
  try {
    answer = await fetch(options.directory, {
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      tls: options.directoryCa ? { ca: options.directoryCa } : undefined,
    })
  } catch (error) {
    const e = error as { code?: string; name?: string }
    const code = e.name === 'TimeoutError' ? 'no answer in 30 s' : (e.code ?? String(error))
    throw new OrderError(`cannot reach the ACME server at ${options.directory} (${code})`)
  }
  if (!answer.ok) {
    throw new OrderError(
      `the ACME server at ${options.directory} answered HTTP ${answer.status}`,
      retryAfterOf(Object.fromEntries(answer.headers), ''),
    )
  }
}

/** The CA's words, or the network's, as one line; and a "retry after" time when it gave one. */
function asOrderError(error: unknown, directory: string): OrderError {
  if (error instanceof OrderError) return error
  const e = error as {
    code?: string
    message?: string
    response?: { status?: number; headers?: Record<string, string>; data?: { detail?: string } }
  }
  const code = e.code
  if (
    code &&
    /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH|ECONNABORTED|CERT_|DEPTH_ZERO|UNABLE_TO|SELF_SIGNED)/.test(
      code,
    )
  ) {
    return new OrderError(`cannot reach the ACME server at ${directory} (${code})`)
  }
  // acme-client's answer to a connection lost in the middle of an order.
  if (/response\.config/.test(e.message ?? '')) {
    return new OrderError(`lost the connection to the ACME server at ${directory}`)
  }
  const said = e.response?.data?.detail
  const status = e.response?.status
  const message = (said ? `${said} (HTTP ${status})` : (e.message ?? String(error)))
    .replace(/\s+/g, ' ')
    .trim()
  return new OrderError(`the CA refused: ${message}`, retryAfterOf(e.response?.headers, message))
}

/** Let's Encrypt says when to come back in the Retry-After header and in its message. */
function retryAfterOf(
  headers: Record<string, string> | undefined,
  message: string,
): number | undefined {
  const header = headers?.['retry-after']
  if (header) {
    const seconds = Number(header)
    if (Number.isFinite(seconds)) return Date.now() + seconds * 1000
    const at = Date.parse(header)
    if (Number.isFinite(at)) return at
  }
  const said =
    /retry after ([0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:]+(?:\.[0-9]+)?\s*(?:UTC|Z)?)/i.exec(message)
  if (said) {
    const at = Date.parse((said[1] as string).replace(' UTC', 'Z').replace(' ', 'T'))
    if (Number.isFinite(at)) return at
  }
  return undefined
}
