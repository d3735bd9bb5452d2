/**
 * The send path in one process, without sockets: the server's real request handler
 * (`serveOptions(ctx).fetch`: front door, request log, Elysia, guard, unit, group commit,
 * durable answer) driven by 32 concurrent callers, beside two cheaper requests through the
 * same handler for scale: `GET /health` (the request path's own floor) and the agent's
 * authenticated empty feed read (`?peek=1` past the end: the guard, one read, a JSON answer).
 * And the send's service alone (`sendMessage`, then the wait until it is on disk: the unit, its
 * SQL, the group commit and its sync, without HTTP, guard, body parsing or answer).
 * Prints the process's CPU per request (utime + stime: the group commit's fdatasync on the
 * thread pool included); the socket's share (Bun.serve, the kernel) is not in these figures.
 * `bun --cpu-prof bench/send-inproc.ts` profiles exactly this and nothing else.
 *
 *   bun bench/send-inproc.ts [--sends 20000] [--warm 2000] [--senders 32] [--rounds 3]
 */
import { type Config, DEFAULTS } from '../src/core/config.ts'
import { silentLogger } from '../src/core/log.ts'
import { sendMessage } from '../src/messages/service.ts'
import { closeContext, createContext } from '../src/server/context.ts'
import { serveOptions } from '../src/server/listen.ts'
import { arg, provision, tempDataDir } from './lib.ts'
import { WRK_SEND_BODY } from './wrk.ts'

const SENDS = arg('sends', 20000)
const WARM = arg('warm', 2000)
const SENDERS = arg('senders', 32)
const ROUNDS = arg('rounds', 3)

const dir = tempDataDir('hark-inproc-')
const { agentTokens, channelIds } = await provision(dir, 1)
const config = { ...DEFAULTS, dataDir: dir, writeLimit: 0 } as Config
const ctx = await createContext(config, { log: silentLogger })
type Handler = (request: Request, server: unknown) => Promise<Response>
const handle = serveOptions(ctx).fetch as Handler
// What the handler asks of Bun's server: the peer's address, and the long-poll's timeout.
const server = {
  requestIP: () => ({ address: '127.0.0.1', family: 'IPv4', port: 1 }),
  timeout() {},
}
const base = 'http://127.0.0.1:8080'
const auth = { authorization: `Bearer ${agentTokens[0]}`, host: '127.0.0.1:8080' }

const requests: Record<string, () => Request> = {
  health: () => new Request(`${base}/health`, { headers: { host: auth.host } }),
  'feed read': () => new Request(`${base}/v1/messages?since=999999999&peek=1`, { headers: auth }),
  send: () =>
    new Request(`${base}/v1/messages`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: WRK_SEND_BODY,
    }),
}

const channel = await ctx.store.channels.byId(channelIds[0] as string)
if (!channel) throw new Error('the provisioned channel is missing')
const sendRequest = JSON.parse(WRK_SEND_BODY)

/** One call of the measured kind: through the handler, or the send's service alone. */
type Call = () => Promise<void>
const through =
  (make: () => Request): Call =>
  async () => {
    const response = await handle(make(), server)
    if (response.status >= 300) throw new Error(`${response.status} ${await response.text()}`)
    await response.arrayBuffer()
  }
const calls: Record<string, Call> = {
  ...Object.fromEntries(Object.entries(requests).map(([name, make]) => [name, through(make)])),
  'send service': async () => {
    await sendMessage(ctx, channel, 'agent', sendRequest)
    await ctx.writes.settled()
  },
}

async function run(call: Call, total: number): Promise<void> {
  let left = total
  const caller = async () => {
    while (left-- > 0) await call()
  }
  await Promise.all(Array.from({ length: SENDERS }, caller))
}

try {
  for (let round = 1; round <= ROUNDS; round++) {
    const figures: string[] = []
    for (const [name, call] of Object.entries(calls)) {
      await run(call, WARM)
      const before = process.cpuUsage()
      const started = performance.now()
      await run(call, SENDS)
      const seconds = (performance.now() - started) / 1000
      const cpu = process.cpuUsage(before)
      const us = (cpu.user + cpu.system) / SENDS
      figures.push(`${name} ${us.toFixed(1)} µs (${(SENDS / seconds).toFixed(0)}/s)`)
    }
    console.log(`round ${round}: CPU per request: ${figures.join(', ')}`)
  }
} finally {
  await closeContext(ctx)
}
