import { afterEach, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { shellWord } from '../../src/cli/harness/files.ts'
import { liveCli } from '../cli/live.ts'
import {
  type CodexCommandHook,
  type CodexSandbox,
  codexHookTrustHash,
  escalatedWrite,
  makeCodexSandbox,
  writeCodexConfig,
} from './codex.ts'
import {
  execCodex,
  HARK,
  nextApproval,
  openApprovalIds,
  reviewerRequests,
  runHark,
} from './hark-codex.ts'
import { type OpenAIStub, startOpenAIStub } from './openai-stub.ts'

/**
 * `hark install codex` against the files a person already has, checked by parsing what it wrote
 * and by the real Codex (0.169.0) running the result: Codex keys hook trust by file, event, group
 * index and handler index, so where hark's group lands decides whether Codex runs it at all.
 */

const live = liveCli()
let sandbox: CodexSandbox | undefined
let stub: OpenAIStub | undefined
afterEach(() => {
  stub?.stop()
  sandbox?.cleanup()
  stub = undefined
  sandbox = undefined
})

/** The hook `hark install codex --wait N` writes, as Codex hashes it. */
const harkHook = (wait = 540): CodexCommandHook => ({
  command: [...HARK.argv, 'hook', 'codex', '--wait', String(wait)].map(shellWord).join(' '),
  timeout: wait + 60,
  statusMessage: 'Waiting for the answer in Hark',
})

/** Codex's trust key for PermissionRequest group `group`, handler 0, declared in hooks.json. */
const trustKey = (box: CodexSandbox, group: number) =>
  `${join(box.codexHome, 'hooks.json')}:permission_request:${group}:0`

/** The trust a person gives their own hook (what Codex writes when they review it). */
const trustToml = (box: CodexSandbox, group: number, hook: CodexCommandHook, matcher?: string) =>
  `[hooks.state.${JSON.stringify(trustKey(box, group))}]\ntrusted_hash = ${JSON.stringify(
    codexHookTrustHash('permission_request', hook, matcher),
  )}\n`

/** The person's own PermissionRequest hook: logs its event, decides nothing. */
const userHook = (box: CodexSandbox): CodexCommandHook => {
  const path = join(box.root, 'user-hook.sh')
  writeFileSync(path, `#!/bin/sh\ncat > '${join(box.root, 'user-hook.json')}'\n`)
  chmodSync(path, 0o755)
  return { command: path }
}

const userGroup = (hook: CodexCommandHook) => ({
  matcher: 'Bash',
  hooks: [{ type: 'command', command: hook.command }],
})

const files = (box: CodexSandbox) => ({
  hooks: readFileSync(join(box.codexHome, 'hooks.json'), 'utf8'),
  config: readFileSync(join(box.codexHome, 'config.toml'), 'utf8'),
})

type Toml = Record<string, unknown> & {
  hooks?: { state?: Record<string, { trusted_hash?: string }> }
}
const parsedConfig = (box: CodexSandbox) => Bun.TOML.parse(files(box).config) as Toml

const install = async (box: CodexSandbox, ...args: string[]) => {
  const ran = await runHark(box, ['install', 'codex', ...args], live.env)
  expect([ran.code, ran.stderr]).toEqual([0, ''])
  return ran.stdout
}

/** A sandbox with the stub provider config, and the person's own files if given. */
function prepared(hooksJson?: object, tables = '') {
  const box = makeCodexSandbox()
  sandbox = box
  const model = startOpenAIStub([escalatedWrite, { type: 'text', text: 'finished' }])
  stub = model
  writeCodexConfig(box.codexHome, model.baseUrl, { tables })
  if (hooksJson) writeFileSync(join(box.codexHome, 'hooks.json'), JSON.stringify(hooksJson))
  return { box, model }
}

/** Codex asks through hark's hook; the person allows; the command runs. */
async function allowedThroughHark(box: CodexSandbox, model: OpenAIStub) {
  const before = await openApprovalIds(live)
  const running = execCodex(box, 'write the file', { ...live.env, HARK_ALLOW_UNSIGNED: '1' }) // answered unsigned: plumbing
  const question = await nextApproval(live, before, running)
  if (!question) throw new Error(`Codex asked no approval: ${JSON.stringify(await running)}`)
  await live.server.person.answer(question.id, { decision: 'allow' })
  const run = await running
  expect([run.timedOut, run.exitCode]).toEqual([false, 0])
  expect(readFileSync(join(box.work, 'out.txt'), 'utf8')).toBe('hello\n')
  expect(reviewerRequests(model)).toEqual([])
}

describe(`hark install codex (${HARK.kind})`, () => {
  test('writes hook, trust and notify around the existing config; again: nothing changes', async () => {
    const { box, model } = prepared()
    const original = readFileSync(join(box.codexHome, 'config.toml'), 'utf8')
    const first = await install(box)
    expect(first).toContain('hooks.json: PermissionRequest hook')
    expect(first).toContain('config.toml: notify, and trust for the hook')
    const config = parsedConfig(box)
    // The stub provider config is still there, whole, and what hark added parses with it.
    expect(files(box).config).toContain(original)
    expect(config).toMatchObject({
      model_provider: 'stub',
      model_providers: { stub: { base_url: model.baseUrl, wire_api: 'responses' } },
      features: { plugins: false, apps: false },
      notify: [...HARK.argv, 'hook', 'codex'],
    })
    // Trust computed independently of hark (test/harnesses/codex.ts, measured against Codex).
    expect(config.hooks?.state?.[trustKey(box, 0)]?.trusted_hash).toBe(
      codexHookTrustHash('permission_request', harkHook()),
    )
    expect(JSON.parse(files(box).hooks)).toEqual({
      hooks: { PermissionRequest: [{ hooks: [{ type: 'command', ...harkHook() }] }] },
    })
    const written = files(box)
    const second = await install(box)
    expect(second.trimEnd().split('\n')).toEqual([
      `${join(box.codexHome, 'hooks.json')}: already up to date`,
      `${join(box.codexHome, 'config.toml')}: already up to date`,
    ])
    expect(files(box)).toEqual(written)
  })

  test("after the person's own group: hark's is trusted at index 1 and runs; --remove restores", async () => {
    const { box, model } = prepared()
    const mine = userHook(box)
    const hooksJson = {
      hooks: {
        PermissionRequest: [userGroup(mine)],
        PostToolUse: [{ hooks: [{ type: 'command', command: 'true' }] }],
      },
    }
    writeFileSync(join(box.codexHome, 'hooks.json'), JSON.stringify(hooksJson, null, 2))
    const own = `${trustToml(box, 0, mine, 'Bash')}\n[projects."/nowhere"]\ntrust_level = "trusted"\n`
    writeCodexConfig(box.codexHome, model.baseUrl, { tables: own })
    const original = readFileSync(join(box.codexHome, 'config.toml'), 'utf8')

    await install(box)
    const state = parsedConfig(box).hooks?.state ?? {}
    expect(state[trustKey(box, 1)]?.trusted_hash).toBe(
      codexHookTrustHash('permission_request', harkHook()),
    )
    expect(state[trustKey(box, 0)]?.trusted_hash).toBe(
      codexHookTrustHash('permission_request', mine, 'Bash'),
    )
    // Both run: the person's hook saw the event (and decided nothing), hark's asked the person.
    await allowedThroughHark(box, model)
    expect(JSON.parse(readFileSync(join(box.root, 'user-hook.json'), 'utf8'))).toMatchObject({
      hook_event_name: 'PermissionRequest',
      tool_input: { command: escalatedWrite.cmd },
    })

    const removed = await install(box, '--remove')
    expect(removed).toContain('hooks.json: removed the hark hook')
    expect(removed).toContain('config.toml: removed notify and hook trust')
    expect(JSON.parse(files(box).hooks)).toEqual(hooksJson)
    expect(files(box).config).toBe(original)
  })

  test("installing again keeps hark's group in place, so groups added after it stay trusted", async () => {
    const { box, model } = prepared()
    await install(box)
    // The person adds a group after hark's and trusts it (index 1).
    const mine = userHook(box)
    const hooksFile = join(box.codexHome, 'hooks.json')
    const withMine = JSON.parse(readFileSync(hooksFile, 'utf8'))
    withMine.hooks.PermissionRequest.push(userGroup(mine))
    writeFileSync(hooksFile, JSON.stringify(withMine, null, 2))
    const configFile = join(box.codexHome, 'config.toml')
    writeFileSync(
      configFile,
      `${readFileSync(configFile, 'utf8')}${trustToml(box, 1, mine, 'Bash')}`,
    )

    await install(box, '--wait', '7')
    const groups = JSON.parse(files(box).hooks).hooks.PermissionRequest
    expect(groups).toEqual([{ hooks: [{ type: 'command', ...harkHook(7) }] }, userGroup(mine)])
    const state = parsedConfig(box).hooks?.state ?? {}
    expect(state[trustKey(box, 0)]?.trusted_hash).toBe(
      codexHookTrustHash('permission_request', harkHook(7)),
    )
    expect(state[trustKey(box, 1)]?.trusted_hash).toBe(
      codexHookTrustHash('permission_request', mine, 'Bash'),
    )
    await allowedThroughHark(box, model)
    expect(existsSync(join(box.root, 'user-hook.json'))).toBe(true)

    // Removing hark's group moves the person's up: hark says so rather than leave it silent.
    const removed = await install(box, '--remove')
    expect(removed).toContain('1 PermissionRequest group(s) of yours moved up one place')
    expect(JSON.parse(files(box).hooks).hooks.PermissionRequest).toEqual([userGroup(mine)])
  })

  test("a person's own notify and inline hooks are kept, and said so", async () => {
    const { box, model } = prepared()
    const configFile = join(box.codexHome, 'config.toml')
    const inline =
      '[[hooks.PostToolUse]]\n[[hooks.PostToolUse.hooks]]\ntype = "command"\ncommand = "true"\n'
    writeFileSync(
      configFile,
      `notify = ["/usr/bin/true"]\n${readFileSync(configFile, 'utf8')}${inline}`,
    )
    const out = await install(box)
    expect(out).toContain('config.toml: kept your own notify')
    // Codex still runs both files' hooks, with a warning: the person should know why.
    expect(out).toContain('config.toml: declares hooks too')
    const config = parsedConfig(box)
    expect(config.notify).toEqual(['/usr/bin/true'])
    expect(config.hooks).toMatchObject({ PostToolUse: [{ hooks: [{ command: 'true' }] }] })
    expect(config.model_providers).toMatchObject({ stub: { base_url: model.baseUrl } })
  })
})
