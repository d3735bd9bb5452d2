import type { Subprocess } from 'bun'

/**
 * strace attached to every thread of a running process (`dist/hark serve`), with `options`
 * (what to trace, inject, where to write); resolves once it is attached. Stop it with `detach`:
 * the process goes on running, and strace's output file is complete.
 */
export async function attachStrace(pid: number, options: string[]): Promise<Subprocess> {
  const strace = Bun.spawn(['strace', '-f', '-p', String(pid), ...options], {
    stdout: 'ignore',
    stderr: 'pipe',
  })
  let said = ''
  const decoder = new TextDecoder()
  for await (const chunk of strace.stderr as ReadableStream<Uint8Array>) {
    said += decoder.decode(chunk)
    if (/attached/.test(said)) return strace
  }
  throw new Error(`strace did not attach to ${pid}: ${said}`)
}

/** Detaches strace (SIGTERM), leaving the traced process running, and waits for it to exit. */
export async function detach(strace: Subprocess): Promise<void> {
  strace.kill('SIGTERM')
  await strace.exited
}

/**
 * strace's options that hold every fsync and fdatasync `ms` before it runs: a disk that takes
 * that long to sync (an SD card under load), simulated on any machine, with no privilege.
 */
export const holdingSyncs = (ms: number): string[] => [
  '-e',
  'trace=fsync,fdatasync',
  '-e',
  `inject=fsync:delay_enter=${ms * 1000}`,
  '-e',
  `inject=fdatasync:delay_enter=${ms * 1000}`,
]
