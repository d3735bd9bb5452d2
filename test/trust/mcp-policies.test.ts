import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { type PolicyClaim, policyText } from '../../src/shared/policy.ts'
import { type Cli, makeCli, removeHome } from '../cli/live.ts'
import { type Relay, startProxy } from '../harnesses/signed.ts'
import { HARK_MCP } from '../mcp/live.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'
import { addPolicy, allowPrefix } from '../policies/fixture.ts'

/**
 * The MCP `approve` tool (Claude Code's --permission-prompt-tool) and approval policies: the
 * person's signed rule decides a matching call with no question; a deny rule denies with its
 * message; a rule a server (a proxy between `hark mcp` and the real server) widened is ignored
 * and the person is asked.
 */
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator; cookie: string }
let cli: Cli
let channelId: string
let proxy: Relay
let forge: (body: Record<string, unknown>) => boolean
let mcp: Client

beforeEach(async () => {
  s = await startFreshServer({ listen: true })
  s.clock.now = () => Date.now()
  owner = await s.setUpOwner()
  const made = await addChannel(s.ctx, { email: 'owner@example.com', label: 'MCP' })
  channelId = made.channel.id
  cli = makeCli()
  const env = { HARK_URL: s.url, HARK_TOKEN: made.token }
  expect((await cli.run(['keys', 'refresh'], { env })).code).toBe(0)
  forge = () => false
  proxy = startProxy(s.url, (body) => forge(body))
  mcp = new Client({ name: 'hark-test', version: '1.0.0' })
  await mcp.connect(
    new StdioClientTransport({
      ...HARK_MCP,
      env: {
        HOME: cli.home,
        XDG_CONFIG_HOME: join(cli.home, 'config'),
        HARK_URL: proxy.url,
        HARK_TOKEN: made.token,
        HARK_HOOK_WAIT: '20',
      },
      stderr: 'pipe',
    }),
  )
})
afterEach(async () => {
  await mcp.close()
  proxy.stop()
  await s.close()
  removeHome(cli)
})

type Result = { content: { type: string; text: string }[] }

const addRule = (rule: PolicyClaim['rule']) => addPolicy({ s, owner }, rule)

const approve = async (command: string) =>
  JSON.parse(
    (
      (await mcp.callTool({
        name: 'approve',
        arguments: { tool_name: 'Bash', input: { command } },
      })) as Result
    ).content[0]?.text ?? '',
  )

const openAsks = async () =>
  (await s.request('GET', '/v1/app/asks', { cookie: owner.cookie })).body.asks as Message[]

describe('MCP approve with approval policies', () => {
  test('a signed allow rule: allowed with no question', async () => {
    await addRule(allowPrefix(channelId, 'npm test'))
    expect(await approve('npm test -- --watch')).toEqual({
      behavior: 'allow',
      updatedInput: { command: 'npm test -- --watch' },
    })
    expect(await openAsks()).toEqual([])
  })

  test("a deny rule: denied at once with the person's message", async () => {
    await addRule({ ...allowPrefix(channelId, 'git push'), effect: 'deny', message: 'Open a PR' })
    expect(await approve('git push origin main')).toEqual({
      behavior: 'deny',
      message: 'Open a PR',
    })
  })

  test('a rule the server widened is ignored: the person is asked', async () => {
    const { claim, proof } = await addRule(allowPrefix(channelId, 'npm test'))
    const widened = { ...claim, rule: allowPrefix(channelId, 'npm') }
    forge = (body) => {
      if (!Array.isArray(body.policies)) return false
      body.policies = [{ id: claim.id, claim: policyText(widened), proof }]
      return true
    }
    const call = approve('npm publish-docs')
    let question: Message | undefined
    for (let i = 0; i < 1500 && !question; i++) {
      question = (await openAsks())[0]
      if (!question) await Bun.sleep(10)
    }
    expect(question).toBeDefined()
    await s.request('POST', `/v1/app/messages/${question?.id}/answer`, {
      cookie: owner.cookie,
      json: { answer: { decision: 'deny', message: 'asked' } },
    })
    expect(await call).toEqual({ behavior: 'deny', message: 'asked' })
    expect(proxy.rewrites).toBeGreaterThan(0)
  })
})
