/**
 * Hostile bodies: what the worst JSON bodies up to the size cap (JSON_BODY_LIMIT) cost `dist/hark`, and how
 * `/health` answers meanwhile. The goal (docs/security.md): any body costs < 50 ms of server CPU
 * and `/health` stays < 10 ms while they arrive.
 *
 * For each kind of body and route: the server's CPU per request (from /proc, over `--rounds`
 * requests, sent one after another), the slowest answer the attacker saw, and the p50/p99/max
 * of `/health` polled every 5 ms from another connection during the whole run.
 *
 *   bun bench/hostile.ts [--rounds 20]
 */
import { rmSync } from 'node:fs'
import { JSON_BODY_LIMIT } from '../src/core/http/body-limit.ts'
import { MAX_JSON_DEPTH } from '../src/core/http/json-body.ts'
import { arg, cpuMs, provision, startHark, tempDataDir } from './lib.ts'

const ROUNDS = arg('rounds', 20)

/** Fills `template`'s `@` with as much of `unit` as keeps the body within the size cap. */
function fill(template: string, unit: string, limit = JSON_BODY_LIMIT - 64): string {
  const room = limit - (template.length - 1)
  return template.replace('@', unit.repeat(Math.floor(room / unit.length)))
}

const half = Math.floor((JSON_BODY_LIMIT - 64) / 2) - 4
const BODIES: Record<string, string | Uint8Array<ArrayBuffer>> = {
  'nested 20,000 deep': `{"label":"x","v":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
  'nested to the cap (~500,000 deep)': `{"v":${'['.repeat(half)}${']'.repeat(half)}}`,
  [`nested ${MAX_JSON_DEPTH} deep, wide (validation fails)`]: fill(
    `{"label":"x","v":[@0]}`,
    `${'['.repeat(MAX_JSON_DEPTH - 3)}0${']'.repeat(MAX_JSON_DEPTH - 3)},`,
  ),
  // The most a body may hold of each, with the rest of the room in one string.
  'just under the caps: 19,990 arrays 30 deep, 19,990 keys': (() => {
    const deep = `${'['.repeat(30)}0${']'.repeat(30)}`
    const arrays = Array.from({ length: 19_990 / 30 - 1 }, () => deep).join(',')
    const keys = Array.from({ length: 19_990 }, (_, i) => `"k${i.toString(36)}":0`).join(',')
    return fill(`{"v":[${arrays}],"o":{${keys}},"label":"@"}`, 'x')
  })(),
  'one flat array of numbers to the cap': fill('{"label":"x","v":[@0]}', '0,'),
  'unknown keys to the cap': fill('{"label":"x",@"z":0}', '"k0000":0,').replace(
    /"k0000":0/g,
    (() => {
      let i = 0
      return () => `"k${(i++).toString(36).padStart(4, '0')}":0`
    })(),
  ),
  'one string to the cap': fill('{"label":"@"}', 'x'),
  'escapes to the cap': fill('{"label":"@"}', '\\n'),
  'lone surrogates': fill('{"label":"@"}', '\\ud800'),
  'invalid UTF-8': new Uint8Array([...new TextEncoder().encode('{"label":"'), 0xff, 0xfe, 34, 125]),
  'not JSON at all': fill('@', '{'),
}

const dir = tempDataDir('hark-hostile-')
try {
  const { agentTokens, personToken } = await provision(dir, 1)
  const server = await startHark(dir, ['--write-limit', '0'])
  const pid = server.proc.pid
  const agent = `Bearer ${agentTokens[0]}`
  const person = `Bearer ${personToken}`
  const ROUTES: { name: string; path: string; auth?: string }[] = [
    { name: 'POST /v1/pair/start (public)', path: '/v1/pair/start' },
    { name: 'POST /v1/auth/passkey/login/verify (public)', path: '/v1/auth/passkey/login/verify' },
    { name: 'POST /v1/messages (agent)', path: '/v1/messages', auth: agent },
    {
      name: 'POST /v1/app/messages/x/answer (person)',
      path: '/v1/app/messages/x/answer',
      auth: person,
    },
  ]

  // /health from another connection every 5 ms, for the whole run.
  const health: number[] = []
  let polling = true
  const healthLoop = (async () => {
    while (polling) {
      const t = performance.now()
      const r = await fetch(`${server.url}/health`)
      await r.arrayBuffer()
      health.push(performance.now() - t)
      await Bun.sleep(5)
    }
  })()

  console.log(`dist/hark on ${server.url}; ${ROUNDS} requests of each body to each route`)
  console.log('body | route | statuses | server CPU per request (ms) | slowest answer (ms)')
  let worstCpu = 0
  for (const [kind, body] of Object.entries(BODIES)) {
    for (const route of ROUTES) {
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (route.auth) headers.authorization = route.auth
      const statuses = new Set<number>()
      let slowest = 0
      const cpu0 = cpuMs(pid)
      for (let i = 0; i < ROUNDS; i++) {
        const t = performance.now()
        const answer = await fetch(`${server.url}${route.path}`, { method: 'POST', headers, body })
        await answer.arrayBuffer()
        slowest = Math.max(slowest, performance.now() - t)
        statuses.add(answer.status)
      }
      const perRequest = (cpuMs(pid) - cpu0) / ROUNDS
      worstCpu = Math.max(worstCpu, perRequest)
      console.log(
        `${kind} | ${route.name} | ${[...statuses].join(',')} | ${perRequest.toFixed(2)} | ${slowest.toFixed(1)}`,
      )
    }
  }
  polling = false
  await healthLoop
  health.sort((a, b) => a - b)
  const at = (p: number) =>
    (health[Math.min(health.length - 1, Math.floor(health.length * p))] ?? 0).toFixed(2)
  console.log(
    `/health meanwhile (${health.length} probes): p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms (goal < 10 ms)`,
  )
  console.log(
    `worst server CPU for one body: ${worstCpu.toFixed(2)} ms (goal < 50 ms; /proc counts 10 ms ticks)`,
  )
  await server.stop()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
