import { afterAll, beforeAll } from 'bun:test'
import { SQL } from 'bun'
import { withDatabase } from '../../src/cli/admin/command.ts'
import { newId, newSecret } from '../../src/core/ids.ts'
import { addChannel } from '../../src/people/service.ts'
import { requireBinary, run, type Served, startServe } from '../binary/process.ts'
import { type MailTrap, startMailTrap } from '../email/mail-trap.ts'
import { startS3, type TestS3 } from '../files/s3-fixture.ts'
import { tempDir } from '../harness.ts'
import { type Receiver, startReceiver } from '../push/receiver.ts'
import { type PgCluster, startCluster } from './cluster.ts'

/**
 * Two `dist/hark serve` instances on one Postgres and one S3 bucket, each with its own data
 * directory, as behind one load balancer (issue 20), for the instances-*.test.ts files: whichever
 * instance a request reaches, it sees every record and wakes every waiter, and work meant to
 * happen once happens once.
 */
export const ORIGIN = 'https://hark.example.com'

export interface TwoInstances {
  a: Served
  b: Served
  /** The shared database, for a look at what the instances wrote. */
  pg: SQL
  receiver: Receiver
  trap: MailTrap
  /** The owner's first channel's agent token, and that channel. */
  agent: string
  channelId: string
  /** The owner's person token. */
  person: string
  /** The owner's browser session (what only the app may do: push devices, invites). */
  ownerApp: string
  /** Agents of channels of their own: the write-limit test's, and the load test's. */
  limited: string
  loaders: string[]
  /** The environment each instance (and `hark admin`) runs with. */
  env(): Record<string, string>
}

/**
 * Starts both instances (and the cluster, the bucket, the push receiver and the mail trap
 * they use) before the tests of the describe this is called in, and stops them after. The
 * returned function hands them over once they are up.
 */
export function useTwoInstances(): () => TwoInstances {
  let cluster: PgCluster
  let s3: TestS3
  let receiver: Receiver
  let trap: MailTrap
  let url: string
  let pg: SQL
  let a: Served
  let b: Served
  let agent: string
  let person: string
  let ownerApp: string
  let channelId: string
  let limited: string
  let loaders: string[]
  let up = false

  const env = (): Record<string, string> => ({
    HARK_CONFIG: '/dev/null',
    HARK_PUSH_ALLOW_HOSTS: '127.0.0.1',
    HARK_METRICS: 'true',
    HARK_SMTP_URL: trap.url,
    HARK_SMTP_FROM: 'hark@example.com',
    HARK_DATABASE_URL: url,
    HARK_S3_URL: s3.url('two/'),
    HARK_BASE_URL: ORIGIN,
  })

  beforeAll(async () => {
    requireBinary()
    cluster = await startCluster()
    url = await cluster.database('instances')
    pg = new SQL(url, { max: 2 })
    s3 = await startS3()
    receiver = startReceiver()
    trap = await startMailTrap()
    // Provisioned the way an operator would on Postgres: `hark admin` with the shared URL.
    const admin = async (...args: string[]) => {
      const done = await run(['admin', ...args, '--data', tempDir('hark-admin-')], env(), 30_000)
      if (done.code !== 0) throw new Error(`hark admin ${args.join(' ')}: ${done.stderr}`)
      return done.stdout.trim().split('\n').at(-1) as string
    }
    await admin('user', 'add', 'owner@example.com', '--owner')
    agent = await admin('channel', 'add', '--user', 'owner@example.com', '--label', 'CI')
    person = await admin('token', 'add', '--user', 'owner@example.com')
    const [channel] = await pg`SELECT id FROM channels WHERE label = 'CI'`
    channelId = channel.id
    // More channels, each with a write limit of its own, for the load tests (in process).
    const more = await withDatabase(
      tempDir('hark-admin-'),
      async (p) => {
        const tokens: string[] = []
        for (let i = 0; i < 9; i++) {
          tokens.push(
            (await addChannel(p, { email: 'owner@example.com', label: `load ${i}` })).token,
          )
        }
        return tokens
      },
      url,
    )
    ;[limited = '', ...loaders] = more
    // The owner logged in to the app, as a passkey login leaves it (a session row, its cookie).
    ownerApp = await withDatabase(
      tempDir('hark-admin-'),
      async (p) => {
        const owner = await p.store.users.byEmail('owner@example.com')
        const { secret, hash } = newSecret(43)
        const now = p.clock.now()
        await p.writes.apply(async (tx) => {
          await tx.store.sessions.insert({
            id: newId('ses'),
            hash,
            user_id: owner?.id as string,
            user_agent: 'test-browser',
            created_at: now,
            expires_at: now + 3600_000,
          })
        })
        return `__Host-hark_session=${secret}`
      },
      url,
    )
    a = await startServe(['--data', tempDir('hark-a-')], env())
    b = await startServe(['--data', tempDir('hark-b-')], env())
    up = true
  }, 120_000)

  afterAll(async () => {
    a?.proc.kill()
    b?.proc.kill()
    await Promise.all([a?.proc.exited, b?.proc.exited])
    await pg?.close()
    await s3?.close()
    receiver?.close()
    await trap?.close()
    await cluster?.close()
  })

  return () => {
    if (!up) throw new Error('the two instances are asked for before they started')
    return { a, b, pg, receiver, trap, agent, channelId, person, ownerApp, limited, loaders, env }
  }
}

export async function call(
  at: Served,
  method: string,
  path: string,
  options: { token?: string; json?: unknown; cookie?: string; signal?: AbortSignal } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {}
  if (options.token) headers.authorization = `Bearer ${options.token}`
  if (options.cookie) {
    headers.cookie = options.cookie
    headers.origin = ORIGIN
  }
  if (options.json !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`${at.url}${path}`, {
    method,
    headers,
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
    signal: options.signal ?? AbortSignal.timeout(30_000),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers }
}

export interface Reply {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the JSON holds
  body: any
  headers: Headers
}

/** Settles with the promise's value, or 'pending' if it is still open after `ms`. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return await Promise.race([promise, Bun.sleep(ms).then(() => 'pending' as const)])
}
