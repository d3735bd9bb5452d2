/**
 * Soak: mixed traffic against dist/hark for `--minutes`, reporting the server's RSS at the
 * start (after a warm-up minute's tenth), every minute, and at the end. Traffic: sends, feed
 * reads, long-polls woken by sends, questions answered by the person, pin updates, edits,
 * deletes, acknowledgments and small uploads, from `--workers` clients over `--channels`.
 *
 *   bun bench/soak.ts [--minutes 10] [--workers 8] [--channels 16] [--polls 200]
 *
 * Target: memory stays flat (RSS at the end close to RSS at the start).
 */
import { rmSync } from 'node:fs'
import { arg, mib, provision, rssKiB, startHark, tempDataDir } from './lib.ts'

const MINUTES = arg('minutes', 10)
const WORKERS = arg('workers', 8)
const CHANNELS = arg('channels', 16)
const POLLS = arg('polls', 200)

const dir = tempDataDir('hark-soak-')
try {
  const { agentTokens, channelIds, personToken } = await provision(dir, CHANNELS)
  const server = await startHark(dir, ['--write-limit', '0'])
  const pid = server.proc.pid
  const url = server.url
  const statuses = new Map<string, number>()
  const count = (what: string, status: number) => {
    const key = `${what} ${status}`
    statuses.set(key, (statuses.get(key) ?? 0) + 1)
  }
  let stop = false
  const call = async (
    what: string,
    token: string,
    method: string,
    path: string,
    body?: unknown,
  ) => {
    try {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      count(what, response.status)
      return response.ok ? ((await response.json()) as Record<string, unknown>) : undefined
    } catch {
      count(what, 0)
      return undefined
    }
  }
  const uploads = new Map<number, number>()

  const worker = async (w: number) => {
    let n = 0
    while (!stop) {
      n++
      const c = (w + n) % CHANNELS
      const token = agentTokens[c] as string
      const op = n % 10
      if (op === 0) {
        const asked = await call('ask', token, 'POST', '/v1/messages', {
          body: {
            title: 'Deploy?',
            blocks: [
              { type: 'choice', id: 'env', options: [{ label: 'staging' }, { label: 'prod' }] },
            ],
          },
        })
        const id = (asked?.message as { id: string } | undefined)?.id
        if (id) {
          const waiting = call('ask-wait', token, 'GET', `/v1/asks/${id}?wait=10`)
          await call('answer', personToken, 'POST', `/v1/app/messages/${id}/answer`, {
            answer: 'staging',
          })
          await waiting
        }
      } else if (op === 1) {
        await call('pin', token, 'PUT', `/v1/pins/build-${n % 5}`, {
          body: {
            title: `Build ${n}`,
            blocks: [{ type: 'progress', id: 'p', value: n % 10, max: 10 }],
          },
        })
      } else if (op === 2) {
        const sent = await call('send', token, 'POST', '/v1/messages', {
          body: { text: `to edit ${n}`, blocks: [{ type: 'progress', id: 'p', value: 1 }] },
        })
        const id = (sent?.message as { id: string } | undefined)?.id
        if (id) {
          await call('edit', token, 'PATCH', `/v1/messages/${id}`, {
            block_patches: [{ id: 'p', value: 2 }],
          })
          if (n % 3 === 0) await call('delete', token, 'DELETE', `/v1/messages/${id}`)
        }
      } else if (op === 3) {
        const sent = await call(
          'person-send',
          personToken,
          'POST',
          `/v1/app/channels/${channelIds[c]}/messages`,
          {
            body: { text: `from the person ${n}` },
          },
        )
        const id = (sent?.message as { id: string } | undefined)?.id
        if (id) await call('ack', token, 'POST', `/v1/messages/${id}/state`, { state: 'done' })
      } else if (op === 4 && (uploads.get(c) ?? 0) < 900 && n % 40 === 4) {
        uploads.set(c, (uploads.get(c) ?? 0) + 1)
        try {
          const response = await fetch(`${url}/v1/files?name=log-${n}.txt`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
            body: 'log line\n'.repeat(1 + (n % 2000)),
          })
          count('upload', response.status)
          await response.arrayBuffer()
        } catch {
          count('upload', 0)
        }
      } else if (op === 5) {
        await call(
          'feed',
          token,
          'GET',
          `/v1/messages?since=${Math.max(0, n * WORKERS - 500)}&peek=1`,
        )
      } else {
        await call('send', token, 'POST', '/v1/messages', { body: { text: `hello ${w}.${n}` } })
      }
      await Bun.sleep(2)
    }
  }

  /** Long-polls that stay parked and re-poll when answered or timed out. */
  const poller = async (p: number) => {
    const token = agentTokens[p % CHANNELS] as string
    let cursor = 0
    while (!stop) {
      const page = await call('poll', token, 'GET', `/v1/messages?since=${cursor}&wait=20&peek=1`)
      if (page) cursor = page.cursor as number
      else await Bun.sleep(100)
    }
  }

  console.log(
    `soak: ${MINUTES} min of mixed traffic, ${WORKERS} workers + ${POLLS} long-polls over ${CHANNELS} channels`,
  )
  const running = [
    ...Array.from({ length: WORKERS }, (_, w) => worker(w)),
    ...Array.from({ length: POLLS }, (_, p) => poller(p)),
  ]
  const started = performance.now()
  await Bun.sleep(Math.min(60_000, MINUTES * 6000))
  const rssStart = rssKiB(pid)
  console.log(`RSS at start (after warm-up): ${mib(rssStart)}`)
  const samples = [rssStart]
  const end = started + MINUTES * 60_000
  while (performance.now() < end) {
    await Bun.sleep(Math.min(60_000, end - performance.now()))
    const rss = rssKiB(pid)
    samples.push(rss)
    const done = [...statuses.values()].reduce((a, b) => a + b, 0)
    console.log(
      `  ${((performance.now() - started) / 60_000).toFixed(1)} min: RSS ${mib(rss)}, ${done} requests so far`,
    )
  }
  const rssEnd = rssKiB(pid)
  stop = true
  // Wake the parked polls so they end.
  for (const token of agentTokens) {
    await call('send', token, 'POST', '/v1/messages', { body: { text: 'bye' } })
  }
  await Promise.all(running)
  const total = [...statuses.values()].reduce((a, b) => a + b, 0)
  const bad = [...statuses].filter(([k]) => !/ 200$/.test(k))
  console.log(
    `RSS at start ${mib(rssStart)}, at end ${mib(rssEnd)} (${(((rssEnd - rssStart) / rssStart) * 100).toFixed(1)}%), ` +
      `min ${mib(Math.min(...samples))}, max ${mib(Math.max(...samples))}; ${total} requests, ` +
      `${(total / ((performance.now() - started) / 1000)).toFixed(0)}/s`,
  )
  console.log(
    `non-200 answers: ${bad.length === 0 ? 'none' : bad.map(([k, v]) => `${k}: ${v}`).join(', ')}`,
  )
  await server.stop()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
