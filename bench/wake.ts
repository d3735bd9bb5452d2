/**
 * Wake latency on dist/hark: the time from starting a write to the answer of the long-poll
 * waiting for it, with `--held` other long-polls parked on other channels (each on its own
 * socket, so all are really held):
 *   - send → the agent's feed poll (`GET /v1/messages?wait=`);
 *   - the person's answer → the agent's question poll (`GET /v1/asks/:id?wait=`).
 *
 *   bun bench/wake.ts [--held 1000] [--wakes 300]
 *
 * Target: p50 < 2 ms, p99 < 10 ms.
 */
import { rmSync } from 'node:fs'
import { MAX_HELD_POLLS } from '../src/core/holds.ts'
import {
  arg,
  ms,
  pct,
  provision,
  type RawAnswer,
  rawRequest,
  startHark,
  tempDataDir,
} from './lib.ts'

const HELD = arg('held', 1000)
const WAKES = arg('wakes', 300)

const dir = tempDataDir('hark-wake-')
try {
  // The other polls' channels get enough tokens to hold them (MAX_HELD_POLLS each).
  const perToken = Math.ceil(HELD / 10 / MAX_HELD_POLLS)
  const { agentTokens, channelTokens, personToken } = await provision(dir, 11, perToken)
  const server = await startHark(dir, ['--write-limit', '0'], { nofile: HELD + 1000 })
  const token = agentTokens[0] as string
  const agent = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const person = { authorization: `Bearer ${personToken}`, 'content-type': 'application/json' }
  console.log(`hark on ${server.url}; ${HELD} other long-polls held on 10 other channels`)

  // The other polls, parked for the whole run (wait=55) on the other channels.
  const held: Promise<RawAnswer>[] = []
  for (let i = 0; i < HELD; i++) {
    const tokens = channelTokens[1 + (i % 10)] as string[]
    const other = tokens[Math.floor(i / 10) % tokens.length] as string
    held.push(
      rawRequest(server.url, 'GET', '/v1/messages?since=1000000000&wait=55', {
        authorization: `Bearer ${other}`,
      }),
    )
    if (i % 250 === 249) await Bun.sleep(20)
  }
  await Bun.sleep(1000)

  const post = (headers: Record<string, string>, path: string, body: unknown) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }).then(
      async (r) => {
        if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`)
        return (await r.json()) as { message: { id: string } }
      },
    )
  const cursorNow = async () => {
    const r = await fetch(`${server.url}/v1/messages?since=0&limit=1&peek=1`, { headers: agent })
    const first = (await r.json()) as { cursor: number }
    // Walk to the end cheaply: the counter only grows, so a large since answers at once.
    let cursor = first.cursor
    for (;;) {
      const page = (await (
        await fetch(`${server.url}/v1/messages?since=${cursor}&peek=1`, { headers: agent })
      ).json()) as { cursor: number; has_more: boolean }
      cursor = page.cursor
      if (!page.has_more) return cursor
    }
  }

  // Warm up both paths.
  for (let i = 0; i < 50; i++) await post(agent, '/v1/messages', { body: { text: `warm ${i}` } })

  const sendWakes: number[] = []
  let cursor = await cursorNow()
  for (let i = 0; i < WAKES; i++) {
    const poll = rawRequest(server.url, 'GET', `/v1/messages?since=${cursor}&wait=10&peek=1`, {
      authorization: `Bearer ${token}`,
    })
    await Bun.sleep(3) // let the poll park
    const t = performance.now()
    const sent = post(agent, '/v1/messages', { body: { text: `wake ${i}` } })
    const answer = await poll
    sendWakes.push(answer.at - t)
    await sent
    cursor = (JSON.parse(answer.body) as { cursor: number }).cursor
  }

  const answerWakes: number[] = []
  for (let i = 0; i < WAKES; i++) {
    const asked = await post(agent, '/v1/messages', {
      body: { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] },
    })
    const id = asked.message.id
    const poll = rawRequest(server.url, 'GET', `/v1/asks/${id}?wait=10`, {
      authorization: `Bearer ${token}`,
    })
    await Bun.sleep(3)
    const t = performance.now()
    const answered = post(person, `/v1/app/messages/${id}/answer`, { answer: true })
    const answer = await poll
    if (!answer.body.includes('"answered"')) throw new Error(`poll not answered: ${answer.body}`)
    answerWakes.push(answer.at - t)
    await answered
  }

  for (const [name, list] of [
    ['send → feed poll', sendWakes],
    ['answer → ask poll', answerWakes],
  ] as const) {
    list.sort((a, b) => a - b)
    console.log(
      `${name.padEnd(18)} p50 ${ms(pct(list, 50))}  p99 ${ms(pct(list, 99))}  max ${ms(list.at(-1) ?? 0)} ` +
        `(${WAKES} wakes; target p50 < 2 ms, p99 < 10 ms)`,
    )
  }
  const stillHeld = await Promise.race([
    Promise.any(held).then(() => false),
    Bun.sleep(10).then(() => true),
  ])
  console.log(`the ${HELD} other polls were still held at the end: ${stillHeld}`)
  await server.stop()
  await Promise.all(held)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
