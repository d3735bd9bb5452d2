// test-needs: release
// (cross-compiled release binaries for other platforms. See scripts/test-parts.ts.)
import { expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { testRelease } from './release.ts'

/**
 * The release carries the agent's side for where agents run: macOS (arm64, x64) and Windows
 * (x64) binaries, cross-compiled by Bun, each checksummed in SHA256SUMS. (They cannot run here;
 * their client code is the same bundle the Linux binary's CLI tests exercise.)
 */
test('release: macOS and Windows client binaries, of the right kind, in SHA256SUMS', async () => {
  const dir = await testRelease('0.0.0-clients.1', 'darwin-arm64,darwin-x64,windows-x64')
  const sums = readFileSync(join(dir, 'SHA256SUMS'), 'utf8')
  const kinds: [string, number[]][] = [
    ['hark-darwin-arm64', [0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0x00, 0x00, 0x01]], // Mach-O 64, arm64
    ['hark-darwin-x64', [0xcf, 0xfa, 0xed, 0xfe, 0x07, 0x00, 0x00, 0x01]], // Mach-O 64, x86-64
    ['hark-windows-x64.exe', [0x4d, 0x5a]], // MZ: a PE executable
  ]
  for (const [name, magic] of kinds) {
    const bytes = readFileSync(join(dir, name))
    expect([name, [...bytes.subarray(0, magic.length)]]).toEqual([name, magic])
    const hash = createHash('sha256').update(bytes).digest('hex')
    expect(sums).toContain(`${hash}  ${name}\n`)
  }
}, 120_000)
