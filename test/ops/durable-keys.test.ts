// test-needs: strace
// (the syscalls of a Bun process, watched by strace. See scripts/test-parts.ts.)
import { afterAll, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../harness.ts'

/**
 * The files a server cannot do without come back whole after a power cut: the push keys
 * (vapid.json: without them the server does not start, and every phone's subscription dies),
 * the ACME account's key and the certificate. Each is written to a temporary file and synced,
 * then linked or renamed into place, then its folder is synced (core/durable-files.ts). Unsynced,
 * a file renamed into place can come back empty: ext4 writes a new file's bytes up to 30 s after
 * its name. Watched in the syscalls of the code that writes them (strace `-y` names each
 * descriptor's path), run in a process of its own.
 */
const ROOT = join(import.meta.dir, '..', '..')
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** Runs `script` (TypeScript, imports from the checkout) under strace; answers its syscalls. */
async function traced(script: string): Promise<{ dir: string; calls: string[] }> {
  const dir = tempDir('hark-durable-keys-')
  dirs.push(dir)
  const trace = join(dir, '..', `${dir.split('/').at(-1)}.strace`)
  dirs.push(trace)
  const proc = Bun.spawn(
    [
      'strace',
      '-f',
      '-y',
      '-o',
      trace,
      '-e',
      'trace=fsync,fdatasync,link,linkat,rename,renameat,renameat2',
      process.execPath,
      '-e',
      script.replaceAll('ROOT', ROOT).replaceAll('DIR', dir),
    ],
    { stdout: 'pipe', stderr: 'pipe', timeout: 20_000 },
  )
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' })
  const calls: string[] = []
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const moved = /(?:rename|link)(?:at2?)?\((?:[^,]*, )?"([^"]+)", (?:[^,]*, )?"([^"]+)"/.exec(
      line,
    )
    if (moved) calls.push(`put ${moved[1]} -> ${moved[2]}`)
    const synced = /\b(?:fsync|fdatasync)\(\d+<([^>]+)>\)/.exec(line)
    if (synced) calls.push(`fsync ${synced[1]}`)
  }
  return { dir, calls }
}

/** The file synced, then put in place at `into`, then `folder` synced, in that order. */
function expectDurablePut(calls: string[], into: string, folder: string) {
  const put = calls.findIndex((c) => c.startsWith('put ') && c.endsWith(` -> ${into}`))
  expect({ into, put: put !== -1 }).toEqual({ into, put: true })
  const from = (calls[put] as string).slice(4, (calls[put] as string).indexOf(' -> '))
  const fileSynced = calls.indexOf(`fsync ${from}`)
  expect({ from, synced: fileSynced !== -1 && fileSynced < put }).toEqual({ from, synced: true })
  expect(calls.slice(put + 1)).toContain(`fsync ${folder}`)
}

test('vapid.json: made and rotated synced, linked or renamed into place, then the data folder synced', async () => {
  const { dir, calls } = await traced(`
    import { loadOrCreateVapid, rotateVapid } from 'ROOT/src/push/vapid.ts'
    loadOrCreateVapid('DIR')
    rotateVapid('DIR')
  `)
  const made = calls.findIndex((c) => c.endsWith(` -> ${join(dir, 'vapid.json')}`))
  expectDurablePut(calls, join(dir, 'vapid.json'), dir)
  // The rotation's rename is a second put, as durable as the first.
  expectDurablePut(calls.slice(made + 1), join(dir, 'vapid.json'), dir)
})

test('the TLS folder: the ACME account key and accounts file synced, renamed into place, then tls/ synced (and the data folder for a new tls/)', async () => {
  const { dir, calls } = await traced(`
    import { certificateFiles } from 'ROOT/src/server/tls/store.ts'
    const files = certificateFiles('DIR')
    await files.accountKey(async () => 'a key')
    files.saveAccountUrl('https://acme.test/directory', 'https://acme.test/account/1')
  `)
  const tls = join(dir, 'tls')
  expectDurablePut(calls, join(tls, 'acme-account.key'), tls)
  expectDurablePut(calls, join(tls, 'acme-accounts.json'), tls)
  expect(calls).toContain(`fsync ${dir}`)
})

test("an agent's config.json (profiles and pinned approvers) saved synced, renamed into place, then its folder synced", async () => {
  const { dir, calls } = await traced(`
    import { saveConfig } from 'ROOT/src/agent/profiles.ts'
    saveConfig({ XDG_CONFIG_HOME: 'DIR' }, { profiles: {} })
  `)
  expectDurablePut(calls, join(dir, 'hark', 'config.json'), join(dir, 'hark'))
})
