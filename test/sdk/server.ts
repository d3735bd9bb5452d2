import { afterAll, beforeAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { requireBinary, run, type Served, startServe } from '../binary/process.ts'

/** A `dist/hark serve` on loopback with an owner, one channel's agent token and a person token. */
export interface SdkServer {
  url: string
  token: string
  personToken: string
  served: Served
  /** A person-side call (the person token), as the web app would make it. */
  person<T>(method: string, path: string, json?: unknown): Promise<T>
  stop(): Promise<void>
}

const lastLine = (text: string) => text.trim().split('\n').at(-1)?.trim() ?? ''

async function admin(args: string[], data: string): Promise<string> {
  const r = await run(['admin', ...args, '--data', data], {}, 30_000)
  if (r.code !== 0) throw new Error(`hark admin ${args.join(' ')}: ${r.code}\n${r.stderr}`)
  return lastLine(r.stdout)
}

export async function startSdkServer(): Promise<SdkServer> {
  requireBinary()
  const data = mkdtempSync(join(tmpdir(), 'hark-sdk-'))
  const email = 'sdk@example.com'
  await admin(['user', 'add', email, '--owner'], data)
  const token = await admin(['channel', 'add', '--user', email, '--label', 'SDK'], data)
  const personToken = await admin(['token', 'add', '--user', email], data)
  const served = await startServe(['--data', data])
  const url = served.url.replace(/\/$/, '')
  return {
    url,
    token,
    personToken,
    served,
    async person<T>(method: string, path: string, json?: unknown): Promise<T> {
      const response = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${personToken}`, 'content-type': 'application/json' },
        body: json === undefined ? undefined : JSON.stringify(json),
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
      return JSON.parse(text) as T
    },
    async stop() {
      served.proc.kill('SIGTERM')
      const killer = setTimeout(() => served.proc.kill('SIGKILL'), 5000)
      await served.proc.exited
      clearTimeout(killer)
      rmSync(data, { recursive: true, force: true })
    },
  }
}

/**
 * One server for the tests of the file (or describe) this is called in: started before them,
 * stopped after them. Asked of the handle once the tests run.
 */
export function useSdkServer(): { readonly server: SdkServer } {
  let server: SdkServer | undefined
  beforeAll(async () => {
    server = await startSdkServer()
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
  })
  return {
    get server() {
      if (!server) throw new Error('the SDK server is asked for before it started')
      return server
    },
  }
}
