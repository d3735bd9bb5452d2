/**
 * What `hark hook claude` adds before the person sees the question: time from exec of
 * `dist/hark hook claude` (a PermissionRequest event on stdin) to the approval's `created_at` on
 * the server, over many runs; beside it, exec to exit of `dist/hark --version` (the floor any
 * command pays) and the server's own answer to one send over HTTP from a warm process.
 *
 *   bun bench/hook.ts [--runs 30] [--bin PATH] [--vs OTHER_BINARY]
 *
 * `--bin` times another build's client (the server is always `dist/hark`); `--vs` alternates a
 * second one run for run and prints the ratio of each pair. Beside each wall time, the client
 * process's CPU time (user + system of the finished process): on a shared, loaded machine the
 * CPU time is the steadier figure.
 *
 * Target (issue 14): the hook adds < 150 ms before the question is on the server.
 */
import { rmSync } from 'node:fs'
import { arg, HARK, ms, pct, provision, requireBinary, startHark, tempDataDir } from './lib.ts'

const RUNS = arg('runs', 30)
const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}
const BINS = [option('bin') ?? HARK, ...(option('vs') ? [option('vs') as string] : [])]
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

interface Figures {
  toQuestion: number[]
  hookCpu: number[]
  versionExit: number[]
  versionCpu: number[]
}
const figures: Figures[] = BINS.map(() => ({
  toQuestion: [],
  hookCpu: [],
  versionExit: [],
  versionCpu: [],
}))
const cpuOf = (usage: { cpuTime: { user: bigint; system: bigint } } | undefined) =>
  usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1000 : Number.NaN
const sendOnly: number[] = []
let n = 0
try {
  for (let i = 0; i < RUNS; i++) {
    for (const [b, bin] of BINS.entries()) {
      await hookOnce(bin, n++, figures[b] as Figures)
    }
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

async function hookOnce(bin: string, i: number, f: Figures) {
  {
    const started = Date.now()
    const proc = Bun.spawn([bin, 'hook', 'claude', '--wait', '30'], {
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
    f.toQuestion.push(ask.created_at - started)
    await fetch(`${server.url}/v1/app/messages/${ask.id}/answer`, {
      method: 'POST',
      headers: person,
      body: JSON.stringify({ answer: { decision: 'deny' } }),
    })
    await proc.exited
    f.hookCpu.push(cpuOf(proc.resourceUsage()))

    const v = performance.now()
    const version = Bun.spawn([bin, '--version'], { stdout: 'ignore' })
    await version.exited
    f.versionExit.push(performance.now() - v)
    f.versionCpu.push(cpuOf(version.resourceUsage()))
  }
}

const line = (name: string, xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  console.log(
    `${name.padEnd(44)} p50 ${ms(pct(s, 50))}  p95 ${ms(pct(s, 95))}  max ${ms(s.at(-1) ?? 0)}`,
  )
}
const median = (xs: number[]) =>
  pct(
    [...xs].sort((a, b) => a - b),
    50,
  )
for (const [b, bin] of BINS.entries()) {
  const f = figures[b] as Figures
  console.log(
    `${BINS.length > 1 ? (b === 0 ? 'A: ' : 'B: ') : ''}hark hook claude, ${RUNS} runs (${bin})`,
  )
  line('exec → approval on the server (ms clock)', f.toQuestion)
  line('  the hook process, CPU until its exit', f.hookCpu)
  line('exec → exit of hark --version', f.versionExit)
  line('  hark --version, CPU', f.versionCpu)
}
line('one send from a warm client', sendOnly)
if (BINS.length > 1) {
  const [a, b] = figures as [Figures, Figures]
  const ratio = (x: number[], y: number[]) =>
    median(x.map((v, i) => v / (y[i] as number))).toFixed(2)
  console.log(
    `A/B pair by pair, median: exec → approval ${ratio(a.toQuestion, b.toQuestion)}, hook CPU ` +
      `${ratio(a.hookCpu, b.hookCpu)}; --version wall ${ratio(a.versionExit, b.versionExit)}, CPU ` +
      `${ratio(a.versionCpu, b.versionCpu)}`,
  )
}
