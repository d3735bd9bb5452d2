import { afterEach, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../harness.ts'
import { type Cli, makeCli, removeHome } from './live.ts'

/**
 * `hark install claude`: hark's hooks and MCP server merged into Claude Code's settings of one
 * scope, idempotent, and `--remove` takes out only hark's. (That Claude Code really runs them is
 * test/harnesses/claude-approvals.test.ts, with the real binary.)
 */
let cli: Cli
let project: string
afterEach(() => {
  removeHome(cli)
  rmSync(project, { recursive: true, force: true })
})

function setup() {
  cli = makeCli()
  project = tempDir('hark-project-')
}

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8'))
const install = (...args: string[]) => cli.run(['install', 'claude', ...args], { cwd: project })

interface Group {
  matcher?: string
  hooks: { type: string; command: string; timeout: number }[]
}

const theirs = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test)'] },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'my-linter' }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
  },
}

describe('hark install claude', () => {
  test('user scope: hooks with explicit timeouts, and the MCP server, beside what is there', async () => {
    setup()
    const settingsFile = join(cli.home, '.claude', 'settings.json')
    mkdirSync(join(cli.home, '.claude'))
    writeFileSync(settingsFile, JSON.stringify(theirs))
    writeFileSync(
      join(cli.home, '.claude.json'),
      JSON.stringify({ numStartups: 3, mcpServers: { gh: { command: 'gh-mcp' } } }),
    )

    const ran = await install()
    expect(ran.code).toBe(0)
    expect(ran.stdout).toContain(`${settingsFile}: hooks PermissionRequest`)
    expect(ran.stderr).toContain('not connected yet')

    const settings = read(settingsFile)
    expect(settings.model).toBe('opus')
    expect(settings.permissions).toEqual(theirs.permissions)
    expect(settings.hooks.PreToolUse).toEqual(theirs.hooks.PreToolUse)
    const stop = settings.hooks.Stop as Group[]
    expect(stop[0]).toEqual(theirs.hooks.Stop[0] as Group)
    expect(stop[1]?.hooks[0]?.command).toMatch(/ hook claude --wait 540$/)

    const permission = settings.hooks.PermissionRequest as Group[]
    expect(permission).toHaveLength(1)
    expect(permission[0]?.matcher).toBe('*')
    expect(permission[0]?.hooks[0]).toMatchObject({ type: 'command', timeout: 600 })
    expect(permission[0]?.hooks[0]?.command).toMatch(
      /main\.ts' hook claude --wait 540$|main\.ts hook claude --wait 540$/,
    )
    for (const event of ['Elicitation', 'Notification', 'PostToolUse']) {
      expect((settings.hooks[event] as Group[])[0]?.hooks[0]?.command).toContain(' hook claude')
    }
    // Hooks that never wait for the person get a short limit.
    expect((settings.hooks.PostToolUse as Group[])[0]?.hooks[0]?.timeout).toBe(30)

    const state = read(join(cli.home, '.claude.json'))
    expect(state.numStartups).toBe(3)
    expect(state.mcpServers.gh).toEqual({ command: 'gh-mcp' })
    expect(state.mcpServers.hark).toMatchObject({ type: 'stdio', command: process.execPath })
    expect(state.mcpServers.hark.args.at(-1)).toBe('mcp')
  })

  test('installing again changes nothing; --remove takes out only hark', async () => {
    setup()
    const settingsFile = join(cli.home, '.claude', 'settings.json')
    mkdirSync(join(cli.home, '.claude'))
    writeFileSync(settingsFile, JSON.stringify(theirs))
    await install('--reply', '--wait', '100')
    const once = readFileSync(settingsFile, 'utf8')
    const stop = (read(settingsFile).hooks.Stop as Group[])[1]?.hooks[0]
    expect(stop).toMatchObject({ timeout: 160 })
    expect(stop?.command).toMatch(/ hook claude --reply --wait 100$/)

    const again = await install('--reply', '--wait', '100')
    expect(again.stdout).toContain(`${settingsFile}: already up to date`)
    expect(readFileSync(settingsFile, 'utf8')).toBe(once)

    const removed = await install('--remove')
    expect(removed.code).toBe(0)
    expect(read(settingsFile)).toEqual(theirs)
    expect(read(join(cli.home, '.claude.json')).mcpServers).toBeUndefined()
  })

  test('project scope: .claude/settings.json and .mcp.json in the directory', async () => {
    setup()
    const ran = await install('--scope', 'project', '--profile', 'work')
    expect(ran.code).toBe(0)
    const settings = read(join(project, '.claude', 'settings.json'))
    expect((settings.hooks.PermissionRequest as Group[])[0]?.hooks[0]?.command).toContain(
      ' hook claude --profile work --wait 540',
    )
    const mcp = read(join(project, '.mcp.json'))
    expect(mcp.mcpServers.hark.args.slice(-3)).toEqual(['mcp', '--profile', 'work'])
  })

  test('local scope: settings.local.json, and the MCP server under this project in ~/.claude.json', async () => {
    setup()
    expect((await install('--scope', 'local')).code).toBe(0)
    expect(read(join(project, '.claude', 'settings.local.json')).hooks.Stop).toHaveLength(1)
    const state = read(join(cli.home, '.claude.json'))
    expect(Object.keys(state.projects)).toHaveLength(1)
    const [dir, entry] = Object.entries(state.projects)[0] as [string, { mcpServers: object }]
    expect(dir.endsWith(project.split('/').at(-1) as string)).toBe(true)
    expect(Object.keys(entry.mcpServers)).toEqual(['hark'])
  })

  test('CLAUDE_CONFIG_DIR moves the user files, as it does for Claude Code', async () => {
    setup()
    const dir = join(cli.home, 'elsewhere')
    const ran = await cli.run(['install', 'claude'], {
      cwd: project,
      env: { CLAUDE_CONFIG_DIR: dir },
    })
    expect(ran.code).toBe(0)
    expect(read(join(dir, 'settings.json')).hooks.PermissionRequest).toHaveLength(1)
    expect(read(join(dir, '.claude.json')).mcpServers.hark).toBeDefined()
  })

  test('a settings file that is not JSON is refused and left as it was', async () => {
    setup()
    const settingsFile = join(cli.home, '.claude', 'settings.json')
    mkdirSync(join(cli.home, '.claude'))
    writeFileSync(settingsFile, '{ "model": "opus", }')
    const ran = await install()
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${settingsFile} is not valid JSON`)
    expect(readFileSync(settingsFile, 'utf8')).toBe('{ "model": "opus", }')
  })

  test('usage mistakes are exit 2 naming the problem, and write nothing', async () => {
    setup()
    for (const args of [
      [],
      ['vim'],
      ['--scope', 'global'],
      ['--wait', '0'],
      ['--wait', 'x'],
      ['--bogus'],
    ]) {
      const ran = await cli.run(
        ['install', ...(args[0] === 'vim' || args.length === 0 ? args : ['claude', ...args])],
        { cwd: project },
      )
      expect([args, ran.code]).toEqual([args, 2])
      expect(ran.stderr.length).toBeGreaterThan(0)
    }
    expect(() => readFileSync(join(cli.home, '.claude', 'settings.json'))).toThrow()
  })
})
