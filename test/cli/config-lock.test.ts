import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  CONFIG_LOCK_WAIT_MS,
  configDir,
  configPath,
  loadConfig,
  updateConfig,
} from '../../src/agent/profiles.ts'
import { sleep, tempDir } from '../harness.ts'

// Hooks of parallel sessions on one profile update config.json at the same moment (a policy's
// use, a batch's answers): no update may drop another's (issue 32, "noticed": last writer won).
const PROFILES = join(import.meta.dir, '../../src/agent/profiles.ts')
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const home = () => {
  const dir = tempDir('hark-config-lock-')
  dirs.push(dir)
  return { XDG_CONFIG_HOME: dir }
}

/** A process that makes `updates` updates, each holding its read `holdMs` before its write. */
function updater(env: Record<string, string>, name: string, updates: number, holdMs: number) {
  const script = `
    const { updateConfig } = await import(${JSON.stringify(PROFILES)})
    for (let n = 1; n <= ${updates}; n++) {
      updateConfig(process.env, (config) => {
        Bun.sleepSync(${holdMs})
        config.inbox = { ...config.inbox, [${JSON.stringify(name)} + '.' + n]: n }
      })
    }`
  return Bun.spawn([process.execPath, '-e', script], {
    env: { ...process.env, ...env },
    stdout: 'ignore',
    stderr: 'pipe',
  })
}

describe('config.json: updates from several processes', () => {
  test('concurrent updates of one file lose nothing, and leave no lock behind', async () => {
    const env = home()
    const procs = ['a', 'b', 'c', 'd'].map((name) => updater(env, name, 8, 3))
    const codes = await Promise.all(procs.map((p) => p.exited))
    for (const [i, p] of procs.entries()) {
      expect(codes[i], await new Response(p.stderr).text()).toBe(0)
    }
    const inbox = loadConfig(env).inbox ?? {}
    expect(Object.keys(inbox).length).toBe(32)
    for (const name of ['a', 'b', 'c', 'd']) {
      for (let n = 1; n <= 8; n++) expect(inbox[`${name}.${n}`]).toBe(n)
    }
    expect(existsSync(`${configPath(env)}.lock`)).toBe(false)
  }, 60_000)

  test('an update waits while a live process holds the lock, then runs', async () => {
    const env = home()
    const lock = `${configPath(env)}.lock`
    updateConfig(env, (config) => {
      config.inbox = { first: 1 }
    })
    // This test process holds it (alive, so not abandoned) until it lets go.
    writeFileSync(lock, String(process.pid))
    const child = updater(env, 'waiting', 1, 0)
    await sleep(300)
    expect(loadConfig(env).inbox).toEqual({ first: 1 })
    rmSync(lock)
    expect(await child.exited).toBe(0)
    expect(loadConfig(env).inbox).toEqual({ first: 1, 'waiting.1': 1 })
  }, 30_000)

  test('a lock left by a process that is gone is broken at once', async () => {
    const env = home()
    const gone = Bun.spawn([process.execPath, '-e', '0'])
    await gone.exited
    updateConfig(env, () => {})
    writeFileSync(`${configPath(env)}.lock`, String(gone.pid))
    const started = performance.now()
    updateConfig(env, (config) => {
      config.inbox = { after: 1 }
    })
    // Had it waited for the lock, it would have taken it over only after the whole wait.
    expect(performance.now() - started).toBeLessThan(CONFIG_LOCK_WAIT_MS)
    expect(loadConfig(env).inbox).toEqual({ after: 1 })
    expect(existsSync(`${configPath(env)}.lock`)).toBe(false)
  })

  test('where the lock cannot be made (a read-only home), a change that changes nothing still runs', () => {
    const env = { XDG_CONFIG_HOME: '/proc/hark-nowhere' }
    expect(updateConfig(env, () => {})).toEqual({ profiles: {} })
    expect(existsSync(configDir(env))).toBe(false)
  })
})
