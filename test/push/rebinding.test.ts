import { afterEach, expect, test } from 'bun:test'
import { isIP } from 'node:net'
import type { Socket, TCPSocketListener } from 'bun'
import type { Resolver } from '../../src/push/endpoint.ts'
import { until } from '../harness.ts'
import { type PushFixture, startPushServer } from './fixture.ts'

/**
 * Issue 31, item 7: a push endpoint's name was looked up for the check and again by `fetch`,
 * so DNS rebinding (a public address for the check, an internal one a moment later) could aim
 * a push at an internal address. The push must go to the address checked, or nowhere.
 */
let f: PushFixture | undefined
const cleanups: (() => void)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0)) clean()
  await f?.close()
  f = undefined
})

const PUBLIC = '93.184.216.34'

/** DNS as an attacker runs it: `first` answers, in turn, then `then` for good. */
function rebinding(first: string[], then = '127.0.0.1'): Resolver & { calls: string[] } {
  const calls: string[] = []
  const resolve = async (hostname: string) => {
    calls.push(hostname)
    return [first[calls.length - 1] ?? then]
  }
  return Object.assign(resolve, { calls })
}

/** An internal service on 127.0.0.1 that the push must never reach: it counts connections. */
function internalService(): { port: number; connections: () => number } {
  let connections = 0
  const listener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        connections++
        socket.end()
      },
      data() {},
    },
  })
  cleanups.push(() => listener.stop(true))
  return { port: listener.port, connections: () => connections }
}

interface Tunnel {
  up?: Socket<undefined>
}

/**
 * The network between the server and the push service, as an HTTPS proxy (HTTPS_PROXY, which
 * fetch honours): it records where each connection was asked to go, and looks a name up with
 * the attacker's DNS, as the network would, tunnelling to what it answers. An address it
 * cannot reach (there is no internet here) is answered 502.
 */
function network(resolve: Resolver): { targets: string[] } {
  const targets: string[] = []
  const listener: TCPSocketListener<Tunnel> = Bun.listen<Tunnel>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        socket.data = {}
      },
      async data(socket, chunk) {
        const tunnel = socket.data
        if (tunnel.up) return void tunnel.up.write(chunk)
        const line = /^CONNECT (\S+):(\d+) /.exec(chunk.toString())
        if (!line) return void socket.end()
        const [, host = '', port = ''] = line
        targets.push(`${host}:${port}`)
        const bare = host.replace(/^\[|\]$/g, '')
        const address = isIP(bare) ? bare : (await resolve(bare))[0]
        if (!address?.startsWith('127.')) {
          return void socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n')
        }
        tunnel.up = await Bun.connect({
          hostname: address,
          port: Number(port),
          socket: {
            data: (_, back) => void socket.write(back),
            close: () => void socket.end(),
          },
        })
        socket.write('HTTP/1.1 200 Connection established\r\n\r\n')
      },
      close(socket) {
        socket.data.up?.end()
      },
    },
  })
  const before = process.env.HTTPS_PROXY
  process.env.HTTPS_PROXY = `http://127.0.0.1:${listener.port}`
  cleanups.push(() => {
    if (before === undefined) delete process.env.HTTPS_PROXY
    else process.env.HTTPS_PROXY = before
    listener.stop(true)
  })
  return { targets }
}

test('push: a name that rebinds to 127.0.0.1 after the check is not reached; the push goes to the checked address', async () => {
  // Public for the subscription's check and for the send's; 127.0.0.1 from then on.
  const dns = rebinding([PUBLIC, PUBLIC])
  f = await startPushServer({ pushAllowHosts: [], resolve: dns })
  const internal = internalService()
  const endpoint = `https://push.rebind.example:${internal.port}/push/a`
  const sub = f.receiver.subscription('a')
  // A device is registered from a browser session (a person token may not: docs/security.md).
  await (await f.s.sessionClient()).call('POST', '/v1/app/push/subscriptions', {
    json: { endpoint, keys: sub.keys },
  })
  const net = network(dns)
  await f.s.agent.send({ body: { text: 'the secret plan' } })
  // The first send goes (or fails); the next check sees 127.0.0.1 and drops the push.
  const push = f.s.ctx.push
  await until(() => (push.outcomes.get('drop') ?? 0) >= 1, 15_000)
  expect(internal.connections()).toBe(0)
  // Every connection asked for was to the address the check approved, never to the name.
  expect(net.targets.length).toBeGreaterThan(0)
  expect(new Set(net.targets)).toEqual(new Set([`${PUBLIC}:${internal.port}`]))
  // One lookup per check, none behind its back: the subscription's, the send's, the retry's.
  expect(dns.calls).toEqual(Array(3).fill('push.rebind.example'))
})

test('push: the request goes to the address the name resolved to, with the name as its Host', async () => {
  // An allowed name that only the server's resolver knows: the push reaches the receiver only
  // if it is sent to the address the send's check was given. A lookup after that answers
  // 127.0.0.2, where nothing listens.
  const dns = rebinding(['127.0.0.1', '127.0.0.1'], '127.0.0.2')
  f = await startPushServer({ pushAllowHosts: [], resolve: dns })
  const port = new URL(f.receiver.url).port
  f.s.ctx.config.pushAllowHosts = [`push.pin.test:${port}`]
  const sub = f.receiver.subscription('a')
  const endpoint = `http://push.pin.test:${port}/push/a`
  // A device is registered from a browser session (a person token may not: docs/security.md).
  await (await f.s.sessionClient()).call('POST', '/v1/app/push/subscriptions', {
    json: { endpoint, keys: sub.keys },
  })
  await f.s.agent.send({ body: { text: 'pinned' } })
  const [received] = await f.receiver.waitFor(1, 10_000)
  expect(received?.payload.text).toBe('pinned')
  expect(received?.headers.get('host')).toBe(`push.pin.test:${port}`)
  // The VAPID signature names the push service's origin, not the address.
  const jwt = /^vapid t=([^,]+),/.exec(received?.headers.get('authorization') ?? '')?.[1] ?? ''
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString())
  expect(claims.aud).toBe(`http://push.pin.test:${port}`)
  expect(dns.calls).toEqual(['push.pin.test', 'push.pin.test'])
})
