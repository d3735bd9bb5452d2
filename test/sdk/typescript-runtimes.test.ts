// test-needs: agent-clis
// (its Deno test runs the Deno of .cache/agent-clis, through test/harnesses/agent-clis.ts. See scripts/test-parts.ts.)
import { beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { denoBin } from '../harnesses/agent-clis.ts'
import { type SdkServer, useSdkServer } from './server.ts'

/**
 * The TypeScript SDK (sdk/typescript) on its own: it type-checks without Bun's or Node's types,
 * and its build runs in Node and its source in Deno against a real `dist/hark serve`.
 */
const ROOT = join(import.meta.dir, '..', '..')
const SDK = join(ROOT, 'sdk', 'typescript')
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc')

const sdk = useSdkServer()
let server: SdkServer

beforeAll(() => {
  server = sdk.server
})

describe('TypeScript SDK: types and other runtimes', () => {
  test('type-checks on its own (no Bun or Node types) and builds for Node', async () => {
    const check = Bun.spawn([TSC, '--noEmit', '-p', SDK], { stdout: 'pipe', stderr: 'pipe' })
    const out = await new Response(check.stdout).text()
    expect(out).toBe('')
    expect(await check.exited).toBe(0)
  }, 60_000)

  test.skipIf(!Bun.which('node'))(
    'the built package runs in Node against dist/hark',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hark-sdk-node-'))
      try {
        const out = join(dir, 'dist')
        const build = Bun.spawn([TSC, '-p', join(SDK, 'tsconfig.build.json'), '--outDir', out], {
          stdout: 'pipe',
        })
        expect(await build.exited).toBe(0)
        writeFileSync(
          join(dir, 'main.mjs'),
          `import { Hark } from './dist/index.js'
const hark = new Hark({ url: process.env.HARK_URL, token: process.env.HARK_TOKEN })
const m = await hark.send('from node')
const r = await hark.waitForAnswer((await hark.ask({ blocks: [{ type: 'confirm', id: 'x', label: 'x' }] })).id, { timeoutMs: 500 })
console.log(JSON.stringify({ text: m.body.text, status: r.status }))`,
        )
        const node = Bun.spawn(['node', join(dir, 'main.mjs')], {
          env: { ...process.env, HARK_URL: server.url, HARK_TOKEN: server.token },
          stdout: 'pipe',
          stderr: 'pipe',
          timeout: 30_000,
        })
        const [stdout, stderr] = [
          await new Response(node.stdout).text(),
          await new Response(node.stderr).text(),
        ]
        expect(stderr).toBe('')
        expect(JSON.parse(stdout)).toEqual({ text: 'from node', status: 'timeout' })
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
    60_000,
  )

  test('the source runs in Deno against dist/hark (no node: imports, fetch only)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hark-sdk-deno-'))
    try {
      writeFileSync(
        join(dir, 'main.ts'),
        `import { Hark } from ${JSON.stringify(join(SDK, 'src', 'index.ts'))}
const hark = new Hark({ url: Deno.env.get('HARK_URL')!, token: Deno.env.get('HARK_TOKEN')! })
const m = await hark.send('from deno')
const q = await hark.ask({ blocks: [{ type: 'confirm', id: 'x', label: 'x' }] })
const r = await hark.waitForAnswer(q.id, { timeoutMs: 500 })
console.log(JSON.stringify({ text: m.body.text, status: r.status }))`,
      )
      const deno = Bun.spawn(
        [
          denoBin(),
          'run',
          '--quiet',
          '--no-config',
          '--allow-net=127.0.0.1',
          '--allow-env',
          join(dir, 'main.ts'),
        ],
        {
          env: {
            ...process.env,
            HARK_URL: server.url,
            HARK_TOKEN: server.token,
            DENO_DIR: join(dir, 'cache'),
            NO_COLOR: '1',
          },
          stdout: 'pipe',
          stderr: 'pipe',
          timeout: 30_000,
        },
      )
      const [stdout, stderr] = [
        await new Response(deno.stdout).text(),
        await new Response(deno.stderr).text(),
      ]
      expect(stderr).toBe('')
      expect(JSON.parse(stdout)).toEqual({ text: 'from deno', status: 'timeout' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
