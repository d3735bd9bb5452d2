/**
 * What `hark hook claude` adds before the person sees the question: time from exec of
 * `dist/hark hook claude` (a PermissionRequest event on stdin) to the approval's `created_at` on
 * the server, over many runs; beside it, exec to exit of `dist/hark --version` (the floor any
 * command pays) and the server's own answer to one send over HTTP from a warm process.
 *
 *   bun bench/hook.ts [--runs 30]
 *
 * Target (issue 14): the hook adds < 150 ms before the question is on the server.
 */
import { rmSync } from 'node:fs'
import { arg, HARK, ms, pct, provision, requireBinary, startHark, tempDataDir } from './lib.ts'

const RUNS = arg('runs', 30)
requireBinary()

const dir = tempDataDir('hark-hook-')
const { agentTokens, personToken } = await provision(dir, 1)
const server = await startHark(dir)
const env = { ...process.env, HARK_URL: server.url, HARK_TOKEN: agentTokens[0] as string }
const person = { authorization: `Bearer ${personToken}`, 'content-type': 'application/json' }

const event = (i: number) =>
  JSON.stringify({
    hook_event_name: 'PermissionRequest',
    session_id: `bench-${i}`,
    cwd: '/home/me/project',
    tool_name: 'Bash',
    tool_input: { command: `make test-${i}`, description: 'Run the tests' },
  })

async function openAsk(): Promise<{ id: string; created_at: number } | undefined> {
  const r = await fetch(`${server.url}/v1/app/asks`, { headers: person })
  const { asks } = (await r.json()) as { asks: { id: string; created_at: number }[] }
  return asks[0]
}

const toQuestion: number[] = []
const versionExit: number[] = []
const sendOnly: number[] = []
try {
  for (let i = 0; i < RUNS; i++) {
    const started = Date.now()
    const proc = Bun.spawn([HARK, 'hook', 'claude', '--wait', '30'], {
      env,
      stdin: new TextEncoder().encode(event(i)),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    let ask = await openAsk()
    while (!ask) {
      await Bun.sleep(2)
      ask = await openAsk()
    }
    toQuestion.push(ask.created_at - started)
    await fetch(`${server.url}/v1/app/messages/${ask.id}/answer`, {
      method: 'POST',
      headers: person,
      body: JSON.stringify({ answer: { decision: 'deny' } }),
    })
    await proc.exited

    const v = performance.now()
    await Bun.spawn([HARK, '--version'], { stdout: 'ignore' }).exited
    versionExit.push(performance.now() - v)

    const s = performance.now()
    await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentTokens[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: { text: `warm send ${i}` }, silent: true }),
    })
    sendOnly.push(performance.now() - s)
  }
} finally {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}

const line = (name: string, xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  console.log(
    `${name.padEnd(44)} p50 ${ms(pct(s, 50))}  p95 ${ms(pct(s, 95))}  max ${ms(s.at(-1) ?? 0)}`,
  )
}
console.log(`hark hook claude, ${RUNS} runs (${HARK})`)
line('exec → approval on the server (ms clock)', toQuestion)
line('exec → exit of hark --version', versionExit)
line('one send from a warm client', sendOnly)
