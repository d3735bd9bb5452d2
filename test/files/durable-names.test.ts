// test-needs: strace
// (the syscalls of dist/hark, watched by strace. See scripts/test-parts.ts.)
import { afterAll, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { provisionAgents, requireBinary, startServe } from '../binary/process.ts'
import { attachStrace, detach } from '../binary/strace.ts'
import { tempDir } from '../harness.ts'

/**
 * An uploaded file survives a power cut once its upload is answered: its bytes are synced, then
 * it is renamed into `files/<channel>/`, and that folder (and `files/` itself, when the
 * channel's folder is new) is synced before the file is recorded. A file's own sync covers
 * its bytes, not its name: without the folder's, a power cut could leave the message naming a
 * file that is not there. Watched in the syscalls of `dist/hark serve` (strace `-y` names each
 * descriptor's path).
 */
const dir = tempDir('hark-durable-names-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The syscalls of the trace, in order: `rename /a -> /b` or `fsync /path`. */
function calls(trace: string): string[] {
  const out: string[] = []
  for (const line of trace.split('\n')) {
    const renamed = /rename(?:at2?)?\((?:[^,]*, )?"([^"]+)", (?:[^,]*, )?"([^"]+)"/.exec(line)
    if (renamed) out.push(`rename ${renamed[1]} -> ${renamed[2]}`)
    const synced = /\b(?:fsync|fdatasync)\(\d+<([^>]+)>\)/.exec(line)
    if (synced) out.push(`fsync ${synced[1]}`)
  }
  return out
}

test('POST /v1/files: the file is renamed into its channel folder, then that folder is synced (and files/ for a new folder)', async () => {
  requireBinary()
  const [{ token, channel }] = await provisionAgents(dir, 'files@example.com', ['files'])
  const server = await startServe(['--data', dir])
  const traceFile = join(dir, 'strace.txt')
  try {
    const upload = async (name: string) => {
      const response = await fetch(`${server.url}/v1/files?name=${name}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
        body: `the bytes of ${name}`,
      })
      expect(response.status).toBe(200)
      return ((await response.json()) as { file_id: string }).file_id
    }
    const strace = await attachStrace(server.proc.pid, [
      '-y',
      '-o',
      traceFile,
      '-e',
      'trace=rename,renameat,renameat2,fsync,fdatasync',
    ])
    const first = await upload('first.txt')
    const second = await upload('second.txt')
    await detach(strace)

    const files = join(dir, 'files')
    const folder = join(files, channel)
    const seen = calls(readFileSync(traceFile, 'utf8'))
    const at = (call: string) => {
      const i = seen.indexOf(call)
      expect({ call, found: i !== -1 }).toEqual({ call, found: true })
      return i
    }
    const renamedFirst = seen.findIndex((c) => c.endsWith(`-> ${join(folder, first)}`))
    const renamedSecond = seen.findIndex((c) => c.endsWith(`-> ${join(folder, second)}`))
    expect(renamedFirst).toBeGreaterThanOrEqual(0)
    expect(renamedSecond).toBeGreaterThan(renamedFirst)
    // After each rename, before the next upload's: the channel's folder; for the first (its
    // folder was made for it), files/ too.
    const afterFirst = seen.slice(renamedFirst, renamedSecond)
    expect(afterFirst).toContain(`fsync ${folder}`)
    expect(afterFirst).toContain(`fsync ${files}`)
    expect(seen.slice(renamedSecond)).toContain(`fsync ${folder}`)
    expect(seen.slice(renamedSecond)).not.toContain(`fsync ${files}`)
    expect(at(`fsync ${folder}`)).toBeGreaterThan(renamedFirst)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
}, 30_000)
