// test-needs: root podman debootstrap
// (Kept in the part container.test.ts ran in before it was split: this file itself needs only
// dist/hark; its image half is container-image.test.ts. See scripts/test-parts.ts.)
import { describe, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { requireBinary, startServe } from '../binary/process.ts'
import { tempDir } from '../harness.ts'
import { all, healthCommand, instructions, one, REPO, sh, text } from './containerfile.ts'

/**
 * The Containerfile, as shipped: its text is checked (a pinned base, a non-root user, the /data
 * volume, the health check) and its HEALTHCHECK command is run against a real `dist/hark`.
 * The image built from it and run under podman is container-image.test.ts's.
 */
describe('Containerfile', () => {
  test('a pinned base, overridable for a digest', () => {
    const arg = all('ARG').find((a) => a.startsWith('BASE='))
    expect(arg).toBeDefined()
    const base = (arg as string).slice('BASE='.length)
    // A Debian point release or a dated tag, optionally by digest; never latest or a bare suite.
    expect(base).toMatch(
      /^docker\.io\/library\/debian:(\d+\.\d+-slim|bookworm-\d{8}-slim)(@sha256:[0-9a-f]{64})?$/,
    )
    expect(one('FROM')).toBe(`\${BASE}`)
    // The comment says how a release pins by digest.
    expect(text).toContain('--build-arg BASE=')
    expect(text).toContain('@sha256:')
  })

  test('runs as a non-root user, keeps its data in the /data volume, the binary as entrypoint', () => {
    const user = one('USER')
    expect(user).toMatch(/^\d+:\d+$/)
    const [uid, gid] = user.split(':').map(Number)
    expect(uid).toBeGreaterThan(0)
    expect(gid).toBeGreaterThan(0)
    expect(instructions.some((line) => /^USER\s+(root|0)\b/i.test(line))).toBe(false)
    // The user is created, and owns /data, before the volume is declared.
    const runStep = one('RUN')
    expect(runStep).toContain(`useradd --system --uid ${uid}`)
    expect(runStep).toContain(`install -d -o ${uid} -g ${gid} -m 0700 /data`)
    expect(one('VOLUME')).toBe('/data')
    const env = one('ENV')
    expect(env).toContain('HARK_DATA=/data')
    expect(env).toContain('HARK_HOST=0.0.0.0')
    expect(env).toContain('HARK_PORT=8080')
    expect(one('EXPOSE')).toBe('8080')
    expect(one('STOPSIGNAL')).toBe('SIGTERM')
    expect(JSON.parse(one('ENTRYPOINT'))).toEqual(['/usr/local/bin/hark'])
    expect(JSON.parse(one('CMD'))).toEqual(['serve'])
    expect(one('COPY')).toBe(`\${HARK_BINARY} /usr/local/bin/hark`)
    // Nothing is downloaded while building: no package manager, no curl.
    expect(instructions.join('\n')).not.toMatch(/apt-get|apk |curl |wget /)
  })

  test('.dockerignore keeps the build context to the server binaries', () => {
    const lines = readFileSync(join(REPO, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
    expect(lines[0]).toBe('*')
    expect(lines).toContain('!dist/hark')
    expect(lines).toContain('!dist/release/*/hark-linux-x64')
  })

  test('the HEALTHCHECK command: 0 while dist/hark answers /health, not 0 when nothing does', async () => {
    requireBinary()
    const cmd = healthCommand()
    expect(cmd[0]).toBe('bash')
    const data = tempDir('hark-container-health-')
    const served = await startServe(['--data', data])
    const port = new URL(served.url).port
    try {
      const up = await sh(cmd, 10_000, { HARK_PORT: port })
      expect(up).toMatchObject({ code: 0 })
    } finally {
      served.proc.kill('SIGTERM')
      await served.proc.exited
      rmSync(data, { recursive: true, force: true })
    }
    const down = await sh(cmd, 10_000, { HARK_PORT: port })
    expect(down.code).not.toBe(0)
  }, 60_000)
})
