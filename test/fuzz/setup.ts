import { addPersonToken } from '../../src/people/service.ts'
import { startTestServer, type TestServer } from '../harness.ts'
import { knownIds } from './fuzz.ts'

export interface FuzzServer {
  s: TestServer
  agent: string
  person: string
  channelId: string
}

/** A real server (real SQLite, the real app) with one channel, a file in it, and tokens. */
export async function fuzzServer(): Promise<FuzzServer> {
  const s = await startTestServer({ writeLimit: 0 })
  const made = await s.addChannel('Fuzzed agent')
  const person = (await addPersonToken(s.ctx, { email: s.ownerEmail })).token
  const file = await made.agent.upload('pic.png', new Uint8Array([137, 80, 78, 71]), 'image/png')
  knownIds.file = file.file_id
  return { s, agent: made.token, person, channelId: made.channelId }
}
