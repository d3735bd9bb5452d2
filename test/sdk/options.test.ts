import { afterAll, describe, expect, test } from 'bun:test'
import { Hark, HarkError, pollUntil, Transport } from '../../sdk/typescript/src/index.ts'

/**
 * The SDK's options that the `hark` binary builds on (sdk/typescript/README.md, "Options for a
 * client of your own"), each against a small loopback server that records what it receives
 * and answers what the test scripts: `retry.onRetry`, a `fetch` of one's own, `Transport`
 * without idempotency keys, `send`'s `proof`, `info()` and `health()` without a token, the
 * network failure's wording, and `onOutage` of a wait.
 */
interface Seen {
  method: string
  path: string
  key: string | null
  auth: string | null
  body: string
}
const seen: Seen[] = []
/** What the next requests are answered, first to last; then `fallback`. */
const script: (() => Response)[] = []
let fallback = () => Response.json({ message: { id: 'msg_1', body: {} } })

const recorder = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(request) {
    seen.push({
      method: request.method,
      path: new URL(request.url).pathname,
      key: request.headers.get('idempotency-key'),
      auth: request.headers.get('authorization'),
      body: await request.text(),
    })
    return (script.shift() ?? fallback)()
  },
})
afterAll(() => recorder.stop(true))
const url = `http://127.0.0.1:${recorder.port}`
const unavailable = () => Response.json({ error: 'down' }, { status: 503 })
const reset = () => {
  seen.length = 0
  script.length = 0
  fallback = () => Response.json({ message: { id: 'msg_1', body: {} } })
}

describe('SDK options the binary builds on', () => {
  test('retry.onRetry is told each retry: why, the pause and the attempt', async () => {
    reset()
    script.push(unavailable, unavailable)
    const told: [string, number, number][] = []
    const hark = new Hark({
      url,
      token: 't',
      retry: { attempts: 5, baseDelayMs: 5, onRetry: (...a) => told.push(a) },
    })
    await hark.send('x')
    expect(seen).toHaveLength(3)
    expect(told).toEqual([
      ['the server answered 503', 5, 1],
      ['the server answered 503', 10, 2],
    ])
  })

  test("a fetch of one's own carries every request (an in-process handler)", async () => {
    reset()
    const through: string[] = []
    const hark = new Hark({
      url: 'http://hark.invalid',
      token: 't',
      fetch: async (u, init) => {
        through.push(`${init.method} ${new URL(u).pathname}`)
        return Response.json({ pins: [] })
      },
    })
    expect(await hark.pins()).toEqual([])
    expect(through).toEqual(['GET /v1/pins'])
    expect(seen).toHaveLength(0)
  })

  test('a network failure names the URL tried and the code', async () => {
    const down = new Hark({ url: 'http://127.0.0.1:9', token: 't', retry: { attempts: 1 } })
    const error = (await down.send('x').catch((e) => e)) as HarkError
    expect(error.kind).toBe('network')
    expect(error.message).toMatch(
      /^cannot reach the server at http:\/\/127\.0\.0\.1:9\/v1\/messages \((ConnectionRefused|ECONNREFUSED)\)$/,
    )
  })

  test('a Transport without idempotency keys: writes carry none and are not repeated', async () => {
    reset()
    fallback = unavailable
    const keyless = new Transport({ url, idempotencyKeys: false, retry: { baseDelayMs: 1 } })
    const answered = await keyless.raw('POST', '/v1/pair/start', { json: {} })
    expect(answered.status).toBe(503)
    expect(seen.map((s) => [s.method, s.key, s.auth])).toEqual([['POST', null, null]])
    // A GET is safe to repeat: it is, up to the attempts (4 by default).
    seen.length = 0
    await expect(keyless.json('GET', '/health')).rejects.toThrow('503: down')
    expect(seen).toHaveLength(4)
    // The default is keyed: the same write is repeated with its one key.
    seen.length = 0
    const keyed = new Transport({ url, token: 't', retry: { attempts: 2, baseDelayMs: 1 } })
    await keyed.raw('POST', '/v1/messages', { json: {} })
    expect(seen).toHaveLength(2)
    expect(seen[0]?.key).toMatch(/^[0-9a-f-]{36}$/)
    expect(seen[1]?.key).toBe(seen[0]?.key as string)
  })

  test('send with proof asks for a signed answer; without it the field is left out', async () => {
    reset()
    const hark = new Hark({ url, token: 't' })
    await hark.send({ title: 'Deploy?' }, { proof: true })
    await hark.send({ title: 'Deploy?' })
    expect(seen.map((s) => JSON.parse(s.body))).toEqual([
      { body: { title: 'Deploy?' }, proof: true },
      { body: { title: 'Deploy?' } },
    ])
  })

  test('info() and health() need no token: none is sent', async () => {
    reset()
    fallback = () => Response.json({ ok: true, base_url: 'https://hark.example' })
    const anonymous = new Hark({ url })
    expect((await anonymous.health()).ok).toBe(true)
    expect((await anonymous.info()).base_url).toBe('https://hark.example')
    expect(seen.map((s) => [s.path, s.auth])).toEqual([
      ['/health', null],
      ['/v1/info', null],
    ])
  })

  test('onOutage: one line when the server is lost, one when it is back', async () => {
    reset()
    const open = () => Response.json({ message: { id: 'msg_q', ask: { status: 'open' } } })
    const answered = () =>
      Response.json({ message: { id: 'msg_q', ask: { status: 'answered' } }, answer: true })
    script.push(unavailable, unavailable, open, answered)
    const lines: string[] = []
    const hark = new Hark({ url, token: 't', retry: { attempts: 1 } })
    const result = await hark.waitForAnswer('msg_q', { onOutage: (l) => lines.push(l) })
    expect(result.status).toBe('answered')
    expect(result.answer).toBe(true)
    expect(lines).toEqual([
      'the server answered 503; still waiting, polling again until the timeout',
      'connected to the server again',
    ])
  })

  test('an empty id or key is refused before any request, naming it', async () => {
    reset()
    const hark = new Hark({ url, token: 't' })
    await expect(hark.waitForAnswer('')).rejects.toThrow('id: is required')
    await expect(hark.edit('', { text: 'x' })).rejects.toThrow('id: is required')
    await expect(hark.unpin('')).rejects.toThrow('key: is required')
    await expect(hark.download('')).rejects.toThrow('fileId: is required')
    expect(seen).toEqual([])
  })

  test('a 429 during a wait does not end it; the next poll waits its Retry-After', async () => {
    let polls = 0
    const times: number[] = []
    const limited = new HarkError('429: slow down', {
      status: 429,
      kind: 'http',
      retryAfterMs: 1500,
    })
    const value = await pollUntil(
      async () => {
        times.push(Date.now())
        if (++polls === 1) throw limited
        return 'answered'
      },
      { deadline: Number.POSITIVE_INFINITY },
    )
    expect(value).toBe('answered')
    // The first outage's own pause is 0.5 s: only the Retry-After makes it 1.5.
    expect((times[1] as number) - (times[0] as number)).toBeGreaterThanOrEqual(1490)
  })

  test('pollUntil ends with undefined at its deadline; an error that is no outage ends it', async () => {
    let polls = 0
    const none = await pollUntil(
      async () => {
        polls++
        return undefined
      },
      { deadline: Date.now() },
    )
    expect(none).toBeUndefined()
    expect(polls).toBe(1)
    const refused = new HarkError('403: no', { status: 403, kind: 'http' })
    await expect(
      pollUntil(
        async () => {
          throw refused
        },
        { deadline: Number.POSITIVE_INFINITY },
      ),
    ).rejects.toBe(refused)
  })
})
