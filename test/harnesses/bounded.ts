/**
 * A real agent CLI run to its end, bounded in time: SIGTERM at the limit (Claude Code stops its
 * hooks and MCP servers, the Codex launcher forwards it to its native binary), SIGKILL 2 s later
 * if that hangs. Both harnesses run their CLI through this one.
 */
export interface BoundedRun {
  exitCode: number | null
  stdout: string
  stderr: string
  timedOut: boolean
  ms: number
}

export async function runBounded(
  cmd: string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string; timeoutMs?: number },
): Promise<BoundedRun> {
  const started = Date.now()
  const proc = Bun.spawn(cmd, {
    cwd: options.cwd,
    env: options.env,
    stdin: options.stdin === undefined ? 'ignore' : new TextEncoder().encode(options.stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    proc.kill('SIGTERM')
    setTimeout(() => proc.kill('SIGKILL'), 2000).unref()
  }, options.timeoutMs ?? 20_000)
  const [stdout, stderr] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ])
  const exitCode = await proc.exited
  clearTimeout(timer)
  return { exitCode, stdout, stderr, timedOut, ms: Date.now() - started }
}
