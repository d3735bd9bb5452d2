// test-needs: qemu-arm64 release
// (the arm64 release binary under qemu-user. See scripts/test-parts.ts.)
import { afterAll, expect, test } from 'bun:test'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { createAgentClient } from '../../src/agent/client.ts'
import { tempDir } from '../harness.ts'
import { requireTool, skipWithout, testRelease } from './release.ts'

/**
 * The arm64 release binary (Raspberry Pi 4/5, Graviton) runs: under qemu-aarch64 user-mode
 * emulation with Debian's arm64 C library (qemu-user-static, libc6-arm64-cross).
 */
const SYSROOT = '/usr/aarch64-linux-gnu'
const dir = tempDir('hark-arm64-')
let proc: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
afterAll(() => {
  proc?.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

const skip = skipWithout(
  () =>
    !!Bun.which('qemu-aarch64-static') && existsSync(join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1')),
  'qemu-user-static or libc6-arm64-cross',
)

test.skipIf(skip)(
  'hark-linux-arm64 starts under qemu-aarch64 and answers /health',
  async () => {
    const qemu = requireTool('qemu-aarch64-static', 'qemu-user-static')
    if (!existsSync(join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1'))) {
      throw new Error(`${SYSROOT} is missing: apt-get install -y libc6-arm64-cross`)
    }
    const release = await testRelease('0.0.0-ops.1')
    const bin = join(release, 'hark-linux-arm64')
    const file = Bun.spawnSync(['od', '-An', '-tx1', '-j18', '-N2', bin]).stdout.toString().trim()
    expect(file).toBe('b7 00') // ELF e_machine EM_AARCH64

    const version = Bun.spawnSync([qemu, '-L', SYSROOT, bin, '--version'], { timeout: 60_000 })
    expect(version.stdout.toString().trim()).toBe('0.0.0-ops.1')

    const p = Bun.spawn(
      [qemu, '-L', SYSROOT, bin, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', dir],
      { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, HARK_CONFIG: '/dev/null' } },
    )
    proc = p
    let log = ''
    const decoder = new TextDecoder()
    void (async () => {
      for await (const chunk of p.stderr) log += decoder.decode(chunk)
    })()
    let url = ''
    for (let i = 0; i < 600 && !url; i++) {
      url = /listening on (http:\/\/\S+)/.exec(log)?.[1] ?? ''
      if (p.exitCode !== null) throw new Error(`exited ${p.exitCode}:\n${log}`)
      await Bun.sleep(100)
    }
    expect(url).not.toBe('')
    const health = await fetch(`${url}/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ ok: true })
    // The API works too: an unauthenticated send is refused the usual way.
    const agent = createAgentClient({ baseUrl: url, token: 'hark_agent_nope' })
    await expect(agent.send({ body: { text: 'x' } })).rejects.toMatchObject({ status: 401 })
    p.kill('SIGTERM')
    expect(await p.exited).toBe(0)
    proc = undefined
  },
  120_000,
)
