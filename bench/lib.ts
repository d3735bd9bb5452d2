/**
 * What the benchmark scripts share: arguments, percentiles, provisioning a data directory
 * directly (the real schema and services, no server), starting `dist/hark`, and reading a
 * process's RSS and CPU time from /proc.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { issueToken } from '../src/access/tokens/service.ts'
import { openDatabase } from '../src/db/database.ts'
import { addChannel, addPersonToken, addUser } from '../src/people/service.ts'
import { directProvisioning } from '../src/server/context.ts'
import { HARK, requireBinary } from '../test/binary/process.ts'

export { HARK, requireBinary }

/** A `--name VALUE` option's text, or undefined when it is not given. */
export function argText(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}

/** A `--name N` option's number, `fallback` when it is not given. */
export function arg(name: string, fallback: number): number {
  const text = argText(name)
  if (text === undefined) return fallback
  const n = Number(text)
  if (!Number.isFinite(n)) throw new Error(`--${name} needs a number`)
  return n
}

export const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
export const ms = (n: number) => `${n.toFixed(2)} ms`
export const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`

export const tempDataDir = (prefix = 'hark-bench-') => mkdtempSync(join(tmpdir(), prefix))

export interface Provisioned {
  /** The first agent token of each channel. */
  agentTokens: string[]
  /** Every agent token of each channel (`tokensPerChannel` of them). */
  channelTokens: string[][]
  channelIds: string[]
  personToken: string
}

/**
 * An owner, `channels` channels with their agent tokens, and a person token, in `dir`. A token
 * holds at most MAX_HELD_POLLS long-polls at once: a bench that holds more on one channel asks
 * for more tokens of each channel (`tokensPerChannel`), as several agents of one channel would.
 */
export async function provision(
  dir: string,
  channels: number,
  tokensPerChannel = 1,
): Promise<Provisioned> {
  const db = openDatabase(join(dir, 'hark.db'))
  const p = directProvisioning(db)
  const email = 'bench@example.com'
  const user = await addUser(p, { email, owner: true })
  const agentTokens: string[] = []
  const channelTokens: string[][] = []
  const channelIds: string[] = []
  for (let i = 0; i < channels; i++) {
    const made = await addChannel(p, { email, label: `bench ${i}` })
    agentTokens.push(made.token)
    channelIds.push(made.channel.id)
    const tokens = [made.token]
    for (let t = 1; t < tokensPerChannel; t++) {
      tokens.push((await issueToken(p, 'agent', user, made.channel, `bench ${i}.${t}`)).token)
    }
    channelTokens.push(tokens)
  }
  const personToken = (await addPersonToken(p, { email })).token
  db.close()
  return { agentTokens, channelTokens, channelIds, personToken }
}

/**
 * A shell snippet raising the soft open-files limit to `n`, or to the hard limit when that is
 * lower (a container may not allow raising the hard limit).
 */
export const raiseNofile = (n: number) =>
  `h=$(ulimit -Hn); if [ "$h" = unlimited ] || [ "$h" -ge ${n} ]; then ulimit -Sn ${n}; else ulimit -Sn "$h"; fi`

export interface Started {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
  log(): string
  stop(): Promise<void>
}

/**
 * Starts a command that prints `listening on URL` (hark serve, or the bare server) and
 * resolves once it does. `nofile` raises the open-files limit first, through the shell.
 */
export async function startListening(
  cmd: string[],
  options: { nofile?: number; env?: Record<string, string> } = {},
): Promise<Started> {
  const argv = options.nofile
    ? ['bash', '-c', `${raiseNofile(options.nofile)} && exec "$@"`, 'bash', ...cmd]
    : cmd
  const proc = Bun.spawn(argv, {
    env: { ...process.env, ...options.env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let log = ''
  const decoder = new TextDecoder()
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    // Keep only the tail: hark logs a line per request (bench/feed.ts reads the last few
    // thousand lines for the server's own time per request).
    for await (const chunk of stream) {
      log += decoder.decode(chunk)
      if (log.length > 2_000_000) log = log.slice(-1_000_000)
    }
  }
  void drain(proc.stdout)
  void drain(proc.stderr)
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const m = /listening on (http:\/\/[^\s]+)/.exec(log)
    if (m) {
      return {
        proc,
        url: (m[1] as string).replace(/\/$/, ''),
        log: () => log,
        async stop() {
          proc.kill('SIGTERM')
          await proc.exited
        },
      }
    }
    if (proc.exitCode !== null) throw new Error(`${cmd.join(' ')} exited ${proc.exitCode}:\n${log}`)
    await Bun.sleep(10)
  }
  proc.kill('SIGKILL')
  throw new Error(`${cmd.join(' ')} did not start in 15 s:\n${log}`)
}

/**
 * `BIN serve` on a free loopback port over the data directory `dir`, `bin` being the command
 * of a build (another binary to compare, `bun src/main.ts`, ...).
 */
export const startServe = (
  bin: string[],
  dir: string,
  extra: string[] = [],
  options: { nofile?: number; env?: Record<string, string> } = {},
) =>
  startListening(
    [...bin, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', dir, ...extra],
    options,
  )

/**
 * `dist/hark serve` on a free loopback port. `HARK_BENCH_CMD` replaces `dist/hark` (e.g.
 * `bun --cpu-prof src/main.ts` to profile the server from source). `options.env` is added to
 * this process's environment (e.g. HARK_DATABASE_URL).
 */
export function startHark(
  dir: string,
  extra: string[] = [],
  options: { nofile?: number; env?: Record<string, string> } = {},
) {
  const custom = process.env.HARK_BENCH_CMD?.split(' ').filter(Boolean)
  if (!custom) requireBinary()
  return startServe(custom ?? [HARK], dir, extra, options)
}

/**
 * Stops a server started under strace the way systemd would (SIGTERM to hark itself: strace
 * passes a signal sent to it on as a detach, leaving hark running), then waits for strace.
 */
export async function stopTraced(strace: Subprocess): Promise<void> {
  const children = readFileSync(`/proc/${strace.pid}/task/${strace.pid}/children`, 'utf8')
  for (const pid of children.trim().split(/\s+/).filter(Boolean))
    process.kill(Number(pid), 'SIGTERM')
  await strace.exited
}

/** Resident memory of a process, in KiB. */
export function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN)
}

/** User + system CPU time of a process (its threads included), in milliseconds. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1000) / 100 // USER_HZ is 100 on Linux
}

/** Number of threads of a process. */
export const threads = (pid: number) =>
  Number(/Threads:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)

export interface RawAnswer {
  /** 0 when the connection ended without an answer. */
  status: number
  body: string
  /** performance.now() when the status line arrived. */
  at: number
}

/**
 * One HTTP/1.1 request on its own socket, answered once (`Connection: close`). Lighter than
 * fetch for thousands of held long-polls, and not subject to fetch's cap on concurrent
 * requests per process.
 */
export function rawRequest(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url)
  const head = [
    `${method} ${path} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    'connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ...(body ? [`content-length: ${Buffer.byteLength(body)}`] : []),
  ].join('\r\n')
  return new Promise((resolve) => {
    let text = ''
    let at = 0
    let settled = false
    const finish = () => {
      if (settled) return
      settled = true
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
      const split = text.indexOf('\r\n\r\n')
      resolve({ status, body: split === -1 ? '' : text.slice(split + 4), at })
    }
    Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        open(socket) {
          socket.write(`${head}\r\n\r\n${body}`)
        },
        data(_socket, chunk) {
          if (at === 0) at = performance.now()
          text += chunk.toString()
        },
        close: finish,
        error: finish,
        connectError: finish,
      },
    }).catch(finish)
  })
}

/** The benches' status message (pg-throughput.ts sends it): a title, a text and a progress block. */
export const SEND_BODY = JSON.stringify({
  body: {
    title: 'Build #42',
    text: 'All green',
    blocks: [{ type: 'progress', value: 3, max: 10 }],
  },
})

/**
 * Re-runs this bench under a raised open-files limit (`raiseNofile`) when the current one is
 * below `need`: a bench holding thousands of polls holds a socket for each.
 */
export async function ensureNofile(need: number, n = 65_536): Promise<void> {
  const limit = Number(Bun.spawnSync(['bash', '-c', 'ulimit -n']).stdout.toString().trim())
  if (limit >= need || process.env.HARK_BENCH_REEXEC) return
  const argv = [process.execPath, ...process.argv.slice(1)]
  const proc = Bun.spawn(['bash', '-c', `${raiseNofile(n)} && exec "$@"`, 'bash', ...argv], {
    env: { ...process.env, HARK_BENCH_REEXEC: '1' },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await proc.exited)
}

/**
 * How a bench holding many polls serves: no write limit, and no bound on the polls one token
 * holds (the benches hold them all on one token, as the shared yardstick does). The bound is
 * lifted through the environment, not `--max-held-polls`, so that `--vs` with a build older
 * than the setting still starts (it ignores the variable, and then answers all but 20 early).
 */
export const HOLDING = { flags: ['--write-limit', '0'], env: { HARK_MAX_HELD_POLLS: '0' } }

/** The feed's cursor at its end, followed page by page (`peek`: nothing marked). */
export async function endCursor(url: string, authorization: string): Promise<number> {
  let cursor = 0
  for (;;) {
    const page = await rawRequest(url, 'GET', `/v1/messages?since=${cursor}&peek=1`, {
      authorization,
    })
    const parsed = JSON.parse(page.body) as { cursor: number; has_more: boolean }
    cursor = parsed.cursor
    if (!parsed.has_more) return cursor
  }
}

/** Holds `n` requests of `path` (raw sockets from this process), 500 at a time. */
export async function holdPolls(
  url: string,
  path: string,
  authorization: string,
  n: number,
): Promise<{ opened: number; answer: Promise<RawAnswer> }[]> {
  const polls: { opened: number; answer: Promise<RawAnswer> }[] = []
  for (let i = 0; i < n; i++) {
    polls.push({
      opened: performance.now(),
      answer: rawRequest(url, 'GET', path, { authorization }),
    })
    if (i % 500 === 499) await Bun.sleep(20)
  }
  return polls
}
