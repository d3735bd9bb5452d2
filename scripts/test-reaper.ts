import { readdirSync, readFileSync } from 'node:fs'

/**
 * Every process a test starts ends with the run (issue 33). The runner makes itself the
 * "child subreaper" of everything below it (Linux prctl PR_SET_CHILD_SUBREAPER): a process a
 * test started that outlives its parent (a daemon that forked away, a postmaster started by
 * pg_ctl, a server a killed test process left behind) is re-parented to the runner instead of
 * PID 1. Once the bun test processes have ended, whatever is still the runner's child was left
 * running by a test: the runner names it, ends it, and counts it as a failure.
 */
const PR_SET_CHILD_SUBREAPER = 36
const WNOHANG = 1

/**
 * A subreaper must also reap: an adopted process that ends stays a zombie until its parent
 * waits for it, and a zombie still answers `kill -0` (install.sh's fake systemd waited
 * forever for a stopped server to go). Every `REAP_MS`, each adopted child that has ended
 * (state Z, not one the runner spawned itself: Bun waits for those) is waited for.
 */
const REAP_MS = 100

export function becomeSubreaper(ours: ReadonlySet<number>): boolean {
  if (process.platform !== 'linux') return false
  try {
    const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi')
    const libc = dlopen('libc.so.6', {
      prctl: {
        args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64],
        returns: FFIType.i32,
      },
      waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
    })
    if (libc.symbols.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) !== 0) return false
    setInterval(() => {
      for (const pid of children('Z')) if (!ours.has(pid)) libc.symbols.waitpid(pid, null, WNOHANG)
    }, REAP_MS).unref()
    return true
  } catch {
    return false
  }
}

/** The runner's children in `state` (a letter of /proc/PID/stat), or in any state but Z. */
function children(state?: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so cut at the last ')'.
      const [s, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(ppid) !== process.pid) continue
      if (state ? s === state : s !== 'Z') found.push(Number(entry))
    } catch {
      // Gone meanwhile.
    }
  }
  return found
}

export interface Leftover {
  readonly pid: number
  readonly command: string
}

/** The runner's children now, other than those it is still waiting for (and zombies). */
export function leftovers(ours: ReadonlySet<number>): Leftover[] {
  const found: Leftover[] = []
  for (const pid of children()) {
    if (ours.has(pid)) continue
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      found.push({
        pid,
        command: command || stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      })
    } catch {
      // Gone meanwhile.
    }
  }
  return found
}

/** Ends them: SIGTERM, then SIGKILL for what is still there a moment later. */
export async function endAll(procs: readonly Leftover[]): Promise<void> {
  for (const p of procs) signal(p.pid, 'SIGTERM')
  const deadline = Date.now() + 3000
  while (Date.now() < deadline && procs.some((p) => alive(p.pid))) await Bun.sleep(50)
  for (const p of procs) if (alive(p.pid)) signal(p.pid, 'SIGKILL')
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig)
  } catch {
    // Already gone.
  }
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}
