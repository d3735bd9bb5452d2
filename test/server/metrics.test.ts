// test-needs: python3-prometheus-client
// (/metrics parsed by Prometheus's own Python client. See scripts/test-parts.ts.)
import { afterEach, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../harness.ts'
import { startPushServer } from '../push/fixture.ts'

/**
 * `GET /metrics` (with `--metrics`): Prometheus text format, read by Prometheus's own parser
 * (the official Python client, Debian's python3-prometheus-client); who may read it; what it
 * counts.
 */
interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}
interface Family {
  name: string
  type: string
  samples: Sample[]
}

const PARSER = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = [{"name": f.name, "type": f.type, "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]} for f in text_string_to_metric_families(sys.stdin.read())]
print(json.dumps(out))
`

/** The exposition parsed strictly (a malformed line is an error, and fails the test). */
function parse(text: string): Family[] {
  const run = Bun.spawnSync(['/usr/bin/python3', '-c', PARSER], { stdin: Buffer.from(text) })
  if (run.exitCode !== 0) throw new Error(`not valid exposition: ${run.stderr.toString()}`)
  return JSON.parse(run.stdout.toString()) as Family[]
}

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const TOKEN = 'scrape-token-0123456789'

async function scrape(s: TestServer, headers: Record<string, string> = {}) {
  const response = await fetch(`${s.url}/metrics`, { headers })
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  }
}

/** Every sample of that name (a counter's samples end in `_total`, its family's name not). */
const samples = (families: Family[], name: string): Sample[] =>
  families.flatMap((f) => f.samples.filter((s) => s.name === name))

describe('GET /metrics', () => {
  test('is not there without --metrics', async () => {
    server = await startTestServer({ listen: true })
    expect((await scrape(server)).status).toBe(404)
  })

  test('parses as Prometheus text and counts requests by route, latency, writes, polls and size', async () => {
    server = await startTestServer({ listen: true, metrics: true })
    const s = server
    await s.agent.send({ body: { text: 'one' } })
    const { message } = await s.agent.send({ body: { text: 'two' } })
    await fetch(`${s.url}/v1/messages/${message.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${s.agentToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'two, edited' }),
    })
    // A long-poll held while scraping.
    const held = fetch(`${s.url}/v1/messages?since=999999&wait=1`, {
      headers: { authorization: `Bearer ${s.agentToken}` },
    })
    for (let i = 0; i < 100 && s.ctx.waiters.size === 0; i++) await Bun.sleep(10)
    const got = await scrape(s)
    expect(got.status).toBe(200)
    expect(got.type).toBe('text/plain; version=0.0.4; charset=utf-8')
    const families = parse(got.text)
    expect(families.find((f) => f.name === 'hark_http_requests')?.type).toBe('counter')
    const sends = samples(families, 'hark_http_requests_total').find(
      (m) =>
        m.labels.route === '/v1/messages' &&
        m.labels.method === 'POST' &&
        m.labels.status === '200',
    )
    expect(sends?.value).toBe(2)
    // Routes are patterns, never raw paths: the id is not a label value.
    expect(got.text).not.toContain(message.id)
    expect(
      samples(families, 'hark_http_requests_total').some(
        (m) => m.labels.route === '/v1/messages/:id' && m.labels.method === 'PATCH',
      ),
    ).toBe(true)
    expect(families.find((f) => f.name === 'hark_http_request_duration_seconds')?.type).toBe(
      'histogram',
    )
    const buckets = samples(families, 'hark_http_request_duration_seconds_bucket')
      .filter((m) => m.labels.route === '/v1/messages')
      .map((m) => m.value)
    const count = samples(families, 'hark_http_request_duration_seconds_count').find(
      (m) => m.labels.route === '/v1/messages',
    )?.value
    expect(buckets.length).toBeGreaterThan(5)
    // Cumulative: never decreasing, and the last (+Inf) equals the count.
    expect(buckets).toEqual([...buckets].sort((x, y) => x - y))
    expect(buckets.at(-1)).toBe(count as number)
    expect(count).toBeGreaterThanOrEqual(2)
    const one = (name: string) => samples(families, name)[0]?.value ?? Number.NaN
    expect(one('hark_longpolls_held')).toBeGreaterThanOrEqual(1)
    expect(one('hark_writes_total')).toBeGreaterThanOrEqual(2)
    expect(one('hark_write_flushes_total')).toBeGreaterThanOrEqual(1)
    expect(one('hark_database_bytes')).toBeGreaterThan(4096)
    expect(one('process_resident_memory_bytes')).toBeGreaterThan(0)
    expect(one('process_cpu_seconds_total')).toBeGreaterThan(0)
    await s.agent.send({ body: { text: 'wakes the poll' } })
    expect((await held).status).toBe(200)
  })

  test('without a token: this machine only, and never through a proxy hop', async () => {
    server = await startTestServer({ listen: true, metrics: true })
    expect((await scrape(server)).status).toBe(200)
    expect((await scrape(server, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(403)
    expect((await scrape(server, { forwarded: 'for=203.0.113.9' })).status).toBe(403)
  })

  test('with --metrics-token: the bearer token, and nothing else, reads it', async () => {
    server = await startTestServer({ listen: true, metrics: true, metricsToken: TOKEN })
    expect((await scrape(server)).status).toBe(401)
    expect((await scrape(server, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(
      401,
    )
    expect((await scrape(server, { authorization: `Bearer ${server.agentToken}` })).status).toBe(
      401,
    )
    const ok = await scrape(server, {
      authorization: `Bearer ${TOKEN}`,
      'x-forwarded-for': '203.0.113.9',
    })
    expect(ok.status).toBe(200)
    expect(parse(ok.text).length).toBeGreaterThan(5)
  })

  test('a malformed exposition is refused by the parser (the check is not vacuous)', () => {
    expect(() => parse('# TYPE x counter\nx{le="1" 2\n')).toThrow(/not valid exposition/)
  })

  test('push deliveries are counted by outcome', async () => {
    const f = await startPushServer({ metrics: true })
    try {
      await f.subscribe('phone')
      await f.s.agent.send({ body: { text: 'to the phone' } })
      await f.receiver.waitFor(1)
      await f.s.ctx.push.idle()
      const text = f.s.ctx.metrics.render(f.s.ctx)
      const sent = samples(parse(text), 'hark_push_deliveries_total').find(
        (m) => m.labels.outcome === 'sent',
      )
      expect(sent?.value).toBe(1)
    } finally {
      await f.close()
    }
  })
})

describe('--log-format json (the compiled binary)', () => {
  test('one object per line: time, level, method, route, status, duration; no secret in any line', async () => {
    const { HARK, requireBinary } = await import('../binary/process.ts')
    requireBinary()
    const { tempDir } = await import('../harness.ts')
    const dir = tempDir('hark-jsonlog-')
    const proc = Bun.spawn(
      [HARK, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', dir, '--log-format', 'json'],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    let log = ''
    const decoder = new TextDecoder()
    const drained = (async () => {
      for await (const chunk of proc.stderr) log += decoder.decode(chunk)
    })()
    try {
      let url = ''
      // Until the setup line: the setup-token file is written after "listening on" is logged.
      for (let i = 0; i < 1500 && !(url && log.includes('setup needed')); i++) {
        url = /listening on (http:\/\/\S+?) /.exec(log)?.[1] ?? ''
        await Bun.sleep(20)
      }
      expect(url).not.toBe('')
      expect(log).toContain('setup needed')
      const setup = readFileSync(join(dir, 'setup-token'), 'utf8').trim()
      const setupToken = new URL(setup).hash.replace(/^#token=/, '')
      const secret = 'hark_agent_not-a-real-token-but-secret'
      await fetch(`${url}/health?token=${secret}`, {
        headers: { authorization: `Bearer ${secret}` },
      })
      await fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, cookie: `hark_session=${secret}` },
        body: '{}',
      })
      await fetch(`${url}/v1/app/setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: url },
        body: JSON.stringify({ setup_token: setupToken }),
      })
      proc.kill('SIGTERM')
      await proc.exited
      await drained
      const lines = log.trim().split('\n')
      const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
      for (const e of entries) {
        expect(typeof e.time).toBe('string')
        expect(['info', 'warn', 'error']).toContain(e.level as string)
      }
      const health = entries.find((e) => e.route === '/health')
      expect(health).toMatchObject({ method: 'GET', path: '/health', status: 200 })
      expect(typeof health?.duration_ms).toBe('number')
      expect(entries.find((e) => e.path === '/v1/messages')).toMatchObject({
        route: '/v1/messages',
        status: 401,
      })
      expect(log).not.toContain(secret)
      expect(log).not.toContain(setupToken)
    } finally {
      proc.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
