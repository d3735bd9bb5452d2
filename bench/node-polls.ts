/**
 * Held long-polls from Node processes (bench/poll-client.mjs), which, unlike Bun's clients, can
 * pick their source address: 50,000 polls to one server port need more than one address's
 * ~28,000 ephemeral ports.
 */
import { join } from 'node:path'
import { raiseNofile } from './lib.ts'

/** How one poll held by `nodePolls` ended: `at` in epoch ms; status 0 = closed unanswered. */
export interface PollEnd {
  status: number
  at: number
  /** When its connection opened (epoch ms). */
  opened: number
  /** e: no messages; w: holds the marker; o: anything else; x: no answer. */
  kind: 'e' | 'w' | 'o' | 'x'
}

/**
 * Holds `n` requests of `path` from `clients` Node processes (bench/poll-client.mjs), client k
 * connecting from 127.0.0.(2+16k) to 127.0.0.(17+16k): each source address has its own ~28,000
 * ephemeral ports. `rate`: new connections a second, all clients together. `parked` resolves
 * once every request is written, `ends` once every poll ended.
 */
export function nodePolls(
  url: string,
  path: string,
  authorization: string,
  n: number,
  clients: number,
  marker: string,
  rate: number,
) {
  const { hostname, port } = new URL(url)
  const procs = Array.from({ length: clients }, (_, k) => {
    const count = Math.floor(n / clients) + (k < n % clients ? 1 : 0)
    // 16 source addresses each: a bind to a busy address's ports costs the kernel more.
    const addresses = Array.from({ length: 16 }, (_, a) => `127.0.0.${2 + 16 * k + a}`)
    const cfg = {
      host: hostname,
      port: Number(port),
      path,
      authorization,
      count,
      marker,
      addresses,
      rate: rate / clients,
    }
    const script = join(import.meta.dir, 'poll-client.mjs')
    const cmd = [
      'bash',
      '-c',
      `${raiseNofile(65_536)} && exec node "$@"`,
      'bash',
      script,
      JSON.stringify(cfg),
    ]
    return Bun.spawn(cmd, { stdout: 'pipe', stderr: 'inherit' })
  })
  let parkedLeft = clients
  let markParked: () => void = () => {}
  const parked = new Promise<void>((resolve) => (markParked = resolve))
  /** The clients' CPU time (ms) as they reported it when parked, and at their end. */
  const cpu = { parked: 0, end: 0 }
  const read = async (proc: (typeof procs)[number]) => {
    const ends: PollEnd[] = []
    let last = 0
    let rest = ''
    for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop() ?? ''
      for (const line of lines) {
        const f = line.split(' ')
        if (f[0] === 'cpu') last = Number(f[1])
        else if (f[0] === 'parked') {
          cpu.parked += last
          if (--parkedLeft === 0) markParked()
        } else if (f[0] === 'a')
          ends.push({
            status: Number(f[2]),
            at: Number(f[3]),
            kind: f[4] as PollEnd['kind'],
            opened: Number(f[5]),
          })
        else if (f[0] === 'x')
          ends.push({ status: 0, at: Number(f[2]), kind: 'x', opened: Number(f[3]) })
      }
    }
    cpu.end += last
    return ends
  }
  const ends = Promise.all(procs.map(read)).then((all) => all.flat())
  return { parked, ends, cpu, pids: procs.map((p) => p.pid) }
}
