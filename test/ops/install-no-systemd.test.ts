// test-needs: release
// (install.sh against a signed test release (cross-compiled, minisign). See scripts/test-parts.ts.)
import { describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { NOSTART_SAYS, REPO, useReleaseServer, V1, V2 } from './install-fixture.ts'

/**
 * install.sh where systemd is not running (a container, say), while another run holds its lock,
 * and for "latest" (GitHub's releases/latest/download).
 */
const { work, install, fakeSystemd, cannotStart } = useReleaseServer()

describe('install.sh without systemd, with a lock, and for the latest version', () => {
  test('systemctl present but systemd not running: installs, starts nothing, says how to run', async () => {
    const sd = fakeSystemd('no-systemd')
    rmSync(join(sd.root, 'run/systemd'), { recursive: true, force: true })
    const r = await install(sd.root, sd.env)
    expect(r.code).toBe(0)
    expect(r.out).toContain('systemd is not running here')
    expect(r.out).toContain(`${join(sd.root, 'usr/local/bin/hark')} serve --config`)
    expect(existsSync(join(sd.root, 'usr/local/bin/hark'))).toBe(true)
    expect(sd.log()).toBe('')
  })

  test('without systemd too, an upgrade is checked before the swap: a failing binary is not installed', async () => {
    const root = join(work, 'container')
    const bin = join(root, 'usr/local/bin/hark')
    const version = () => Bun.spawnSync([bin, '--version']).stdout.toString().trim()
    const first = await install(root, {})
    expect(first.code).toBe(0)
    expect(first.out).toContain(`Checked hark ${V1} against ${join(root, 'etc/hark/hark.env')}`)
    const data = join(root, 'var/lib/hark')
    expect(
      Bun.spawnSync([bin, 'admin', 'user', 'add', 'me@example.com', '--data', data]).exitCode,
    ).toBe(0)

    const refused = await install(root, { HARK_BINARY: cannotStart() })
    expect(refused.code).toBe(1)
    expect(refused.err).toContain(
      `hark 9.9.9-nostart cannot start on this configuration and data, so it was not installed; hark ${V1} stays at ${bin}`,
    )
    expect(refused.err).toContain(NOSTART_SAYS)
    expect(refused.out).not.toContain('Upgraded')
    expect(version()).toBe(V1)
    expect(existsSync(join(data, 'backups'))).toBe(false)

    const upgraded = await install(root, { HARK_VERSION: V2 })
    expect(upgraded.err).toBe('')
    expect(upgraded.code).toBe(0)
    expect(upgraded.out).toContain(`Checked hark ${V2}`)
    expect(upgraded.out).toContain(`Upgraded hark ${V1} -> ${V2}`)
    expect(upgraded.out).toContain(`a hark already running keeps ${V1} until it is restarted`)
    expect(version()).toBe(V2)
  }, 90_000)

  test('a second run while one holds the lock is refused before changing anything', async () => {
    const root = join(work, 'locked')
    mkdirSync(join(root, 'run/lock/hark-install'), { recursive: true })
    const r = await install(root, { HARK_SKIP_SYSTEMD: '1' })
    expect(r.code).toBe(1)
    expect(r.err).toContain('another install.sh or hark-uninstall is running')
    expect(existsSync(join(root, 'usr/local/bin/hark'))).toBe(false)
    expect(existsSync(join(root, 'etc/hark'))).toBe(false)
    // Not its lock: left for whoever holds it.
    expect(existsSync(join(root, 'run/lock/hark-install'))).toBe(true)
  })

  test('"latest" is fetched from GitHub\'s releases/latest/download/NAME', async () => {
    const fake = join(work, 'curl-fake')
    mkdirSync(fake, { recursive: true })
    writeFileSync(join(fake, 'curl'), `#!/bin/sh\necho "$@" >> ${fake}/urls\nexit 22\n`)
    chmodSync(join(fake, 'curl'), 0o755)
    const root = join(work, 'latest')
    const proc = Bun.spawn(['sh', join(REPO, 'install.sh')], {
      env: {
        PATH: `${fake}:${process.env.PATH}`,
        HOME: work,
        HARK_ROOT: root,
        HARK_SKIP_SYSTEMD: '1',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const err = await new Response(proc.stderr).text()
    expect(await proc.exited).toBe(1)
    expect(err).toContain(
      'download failed: https://github.com/hark/hark/releases/latest/download/SHA256SUMS',
    )
    expect(readFileSync(join(fake, 'urls'), 'utf8')).toContain(
      'https://github.com/hark/hark/releases/latest/download/SHA256SUMS',
    )
    expect(existsSync(join(root, 'usr/local/bin/hark'))).toBe(false)
  })
})
