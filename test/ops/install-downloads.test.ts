// test-needs: release
// (install.sh against a signed test release (cross-compiled, minisign). See scripts/test-parts.ts.)
import { describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { useReleaseServer, V1 } from './install-fixture.ts'
import { testRelease } from './release.ts'

/**
 * What install.sh downloads, and what it refuses: the binary for the machine (arm64, x64 with or
 * without AVX2, or a local file) verified by SHA256SUMS; a checksum mismatch, a failed download
 * or an unsupported architecture installs nothing.
 */
const { work, requests, base, install } = useReleaseServer()

describe('install.sh refuses', () => {
  test('a checksum mismatch, installing nothing', async () => {
    const root = join(work, 'tampered')
    const r = await install(root, {
      HARK_SKIP_SYSTEMD: '1',
      HARK_BASE_URL_DOWNLOAD: `${base}/tampered`,
    })
    expect(r.code).toBe(1)
    expect(r.err).toContain('checksum mismatch for hark-linux-x64')
    expect(r.err).toContain('Nothing was installed')
    expect(existsSync(join(root, 'usr/local/bin/hark'))).toBe(false)
    expect(existsSync(join(root, 'etc/hark'))).toBe(false)
  })

  test('a download that fails', async () => {
    const r = await install(join(work, 'missing'), {
      HARK_SKIP_SYSTEMD: '1',
      HARK_VERSION: '9.9.9',
    })
    expect(r.code).toBe(1)
    expect(r.err).toContain(`download failed: ${base}/9.9.9/SHA256SUMS`)
  })

  test('unsupported architectures, before downloading anything', async () => {
    const cases: [string, string][] = [
      ['armv7l', '32-bit ARM (armv7l) is not supported'],
      ['armv6l', 'install Raspberry Pi OS (64-bit)'],
      ['i686', '32-bit x86 (i686) is not supported'],
      ['riscv64', 'unsupported architecture riscv64'],
    ]
    for (const [arch, message] of cases) {
      const seen = requests.length
      const r = await install(join(work, `arch-${arch}`), {
        HARK_SKIP_SYSTEMD: '1',
        HARK_ARCH: arch,
      })
      expect(r.code).toBe(1)
      expect(r.err).toContain(message)
      expect(requests.length).toBe(seen)
      expect(existsSync(join(work, `arch-${arch}`))).toBe(false)
    }
  })
})

describe('install.sh picks the binary for the machine', () => {
  const pick = async (name: string, env: Record<string, string>) => {
    const seen = requests.length
    const r = await install(join(work, name), { HARK_SKIP_SYSTEMD: '1', ...env })
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    return requests.slice(seen).filter((p) => p.includes('/hark-linux-'))
  }

  test('aarch64 gets arm64', async () => {
    expect(await pick('aarch64', { HARK_ARCH: 'aarch64' })).toEqual([`/${V1}/hark-linux-arm64`])
  })

  test('x86_64 with AVX2 gets x64, without it the baseline build', async () => {
    const cpu = join(work, 'cpuinfo')
    writeFileSync(cpu, 'flags\t\t: fpu sse sse2 avx avx2 bmi2\n')
    expect(await pick('avx2', { HARK_ARCH: 'x86_64', HARK_CPUINFO: cpu })).toEqual([
      `/${V1}/hark-linux-x64`,
    ])
    writeFileSync(cpu, 'flags\t\t: fpu sse sse2 avx\n')
    expect(await pick('noavx2', { HARK_ARCH: 'x86_64', HARK_CPUINFO: cpu })).toEqual([
      `/${V1}/hark-linux-x64-baseline`,
    ])
  })

  test('a local file, verified by the SHA256SUMS next to it', async () => {
    const release = await testRelease(V1)
    const root = join(work, 'local')
    const r = await install(root, {
      HARK_SKIP_SYSTEMD: '1',
      HARK_BINARY: join(release, 'hark-linux-x64-baseline'),
      HARK_BASE_URL_DOWNLOAD: 'http://127.0.0.1:9/unreachable',
    })
    expect(r.code).toBe(0)
    expect(r.out).toContain('Verified')
    expect(r.out).toContain('Skipped systemd')
    const copy = join(work, 'local-bad')
    mkdirSync(copy, { recursive: true })
    writeFileSync(join(copy, 'hark-linux-x64'), 'not hark')
    writeFileSync(join(copy, 'SHA256SUMS'), readFileSync(join(release, 'SHA256SUMS')))
    const bad = await install(join(work, 'local2'), {
      HARK_SKIP_SYSTEMD: '1',
      HARK_BINARY: join(copy, 'hark-linux-x64'),
    })
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('checksum mismatch')
  }, 60_000)
})
