import type { Subprocess } from 'bun'
import { HARK } from '../binary/process.ts'

/** `dist/hark serve` with the given flags, its log collected; `until` waits for a log line. */
export interface HarkProcess {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  log(): string
  until(pattern: RegExp, ms?: number): Promise<RegExpExecArray>
  stop(): Promise<number>
}

export function spawnHark(args: string[], env: Record<string, string> = {}): HarkProcess {
  const proc = Bun.spawn([HARK, 'serve', ...args], {
    env: { ...process.env, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let output = ''
  const decoder = new TextDecoder()
  for (const stream of [proc.stdout, proc.stderr]) {
    void (async () => {
      for await (const chunk of stream) output += decoder.decode(chunk)
    })()
  }
  return {
    proc,
    log: () => output,
    async until(pattern, ms = 20_000) {
      const deadline = Date.now() + ms
      for (;;) {
        const m = pattern.exec(output)
        if (m) return m
        if (proc.exitCode !== null)
          throw new Error(`hark exited ${proc.exitCode} before ${pattern}:\n${output}`)
        if (Date.now() > deadline) throw new Error(`no ${pattern} in ${ms} ms:\n${output}`)
        await Bun.sleep(25)
      }
    },
    async stop() {
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      const code = await proc.exited
      clearTimeout(timer)
      return code
    },
  }
}
