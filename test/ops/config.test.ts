import { afterAll, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from '../../src/cli/args.ts'
import {
  printConfig,
  resolveConfig,
  SERVE_BOOLEANS,
  SERVE_VALUED,
  SETTINGS,
  type Setting,
} from '../../src/cli/settings.ts'
import { UsageError } from '../../src/core/errors.ts'
import { HARK, requireBinary, run } from '../binary/process.ts'
import { tempDir } from '../harness.ts'

const dir = tempDir('hark-config-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const NO_FILE = { defaultFile: join(dir, 'absent.env') }
const args = (...argv: string[]) => parseArgs(argv, SERVE_VALUED, SERVE_BOOLEANS)
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

test('precedence: flag > environment > config file > default', () => {
  const path = file('a.env', 'HARK_PORT=3000\nHARK_HOST=10.0.0.1\nHARK_WRITE_LIMIT=7\n')
  const r = resolveConfig(
    args('--config', path, '--port', '4000'),
    { HARK_PORT: '5000', HARK_HOST: '127.0.0.1' },
    NO_FILE,
  )
  expect(r.config.port).toBe(4000)
  expect(r.sources.port).toBe('flag')
  expect(r.config.host).toBe('127.0.0.1')
  expect(r.sources.host).toBe('env')
  expect(r.config.writeLimit).toBe(7)
  expect(r.sources.writeLimit).toBe('file')
  expect(r.config.maxFileSize).toBe(25 * 1024 * 1024)
  expect(r.sources.maxFileSize).toBe('default')
  // A default may use earlier settings: the base URL follows the resolved port.
  expect(r.config.baseUrl).toBe('http://localhost:4000')
  expect(r.config.trustProxy).toBe(false)
})

test('the config file: $HARK_CONFIG, else the default path only if it exists', () => {
  const path = file(
    'b.env',
    '# comment\n\nexport HARK_PORT="6000"\nHARK_BASE_URL=\'https://h.example/\'\n',
  )
  expect(resolveConfig(args(), { HARK_CONFIG: path }, NO_FILE).config.port).toBe(6000)
  const viaDefault = resolveConfig(args(), {}, { defaultFile: path })
  expect(viaDefault.config.baseUrl).toBe('https://h.example')
  expect(viaDefault.file).toBe(path)
  const none = resolveConfig(args(), {}, NO_FILE)
  expect(none.file).toBeUndefined()
  expect(none.config.port).toBe(8080)
  // A named file must exist.
  expect(() => resolveConfig(args('--config', join(dir, 'nope.env')), {}, NO_FILE)).toThrow(
    'cannot read the config file',
  )
})

test('empty values count as unset; booleans read true/false/1/0/yes/no', () => {
  const path = file('c.env', 'HARK_PORT=\nHARK_TRUST_PROXY=yes\n')
  const r = resolveConfig(args('--config', path), { HARK_HOST: '' }, NO_FILE)
  expect(r.config.port).toBe(8080)
  expect(r.config.host).toBe('0.0.0.0')
  expect(r.config.trustProxy).toBe(true)
  expect(resolveConfig(args('--trust-proxy'), {}, NO_FILE).config.trustProxy).toBe(true)
  const off = resolveConfig(args('--config', path), { HARK_TRUST_PROXY: 'false' }, NO_FILE)
  expect(off.config.trustProxy).toBe(false)
  expect(() => resolveConfig(args(), { HARK_TRUST_PROXY: 'maybe' }, NO_FILE)).toThrow(UsageError)
})

test('a typo or a bad line in the file is an error naming the line', () => {
  const typo = file('d.env', 'HARK_PORT=1\nHARK_PROT=2\n')
  expect(() => resolveConfig(args('--config', typo), {}, NO_FILE)).toThrow(
    `${typo}:2: unknown setting HARK_PROT`,
  )
  const junk = file('e.env', 'just words\n')
  expect(() => resolveConfig(args('--config', junk), {}, NO_FILE)).toThrow(`${junk}:1: expected`)
  const bad = file('f.env', 'HARK_PORT=99999\n')
  expect(() => resolveConfig(args('--config', bad), {}, NO_FILE)).toThrow('--port must be')
})

test('--print-config shows every value with its source and masks secrets', () => {
  const r = resolveConfig(args('--port', '1234'), { HARK_DATA: 'rel/dir' }, NO_FILE)
  const text = printConfig(r)
  expect(text).toContain('HARK_PORT=1234  # flag')
  expect(text).toContain(`HARK_DATA=${resolve('rel/dir')}  # env`)
  expect(text).toContain('HARK_WRITE_LIMIT=120  # default')
  for (const s of SETTINGS) expect(text).toContain(`${s.env}=`)
  const secret = {
    ...(SETTINGS.find((s) => s.key === 'host') as Setting),
    env: 'HARK_SECRET',
    secret: true,
  }
  expect(printConfig(r, [secret])).toContain('HARK_SECRET=********  # default')
})

test('every setting is a flag, a variable, a line of deploy/hark.env and a README row', () => {
  const template = readFileSync(join(import.meta.dir, '../../deploy/hark.env'), 'utf8')
  const readme = readFileSync(join(import.meta.dir, '../../README.md'), 'utf8')
  for (const s of SETTINGS) {
    expect(s.env).toMatch(/^HARK_[A-Z0-9_]+$/)
    expect(template).toMatch(new RegExp(`^#?${s.env}=`, 'm'))
    expect(readme).toContain(`\`--${s.flag}`)
    expect(readme).toContain(`\`${s.env}\``)
  }
})

test('dist/hark serve --print-config reads a config file', async () => {
  requireBinary()
  const path = file('g.env', 'HARK_PORT=7001\nHARK_DATA=/srv/hark\n')
  const r = await run(['serve', '--config', path, '--print-config'], { HARK_PORT: '' })
  expect(r.code).toBe(0)
  expect(r.stdout).toContain(`config file: ${path}`)
  expect(r.stdout).toContain('HARK_PORT=7001  # file')
  expect(r.stdout).toContain('HARK_DATA=/srv/hark  # file')
  const typo = await run(['serve', '--config', file('h.env', 'PORT=1\n')])
  expect(typo.code).toBe(2)
  expect(typo.stderr).toContain('unknown setting PORT')
  expect(HARK).toBeTruthy()
})

test('--max-held-polls: flag or HARK_MAX_HELD_POLLS, 0 turns the bound off, default 20', () => {
  expect(resolveConfig(args(), {}, NO_FILE).config.maxHeldPolls).toBe(20)
  expect(resolveConfig(args('--max-held-polls', '0'), {}, NO_FILE).config.maxHeldPolls).toBe(0)
  const env = resolveConfig(args(), { HARK_MAX_HELD_POLLS: '5000' }, NO_FILE)
  expect([env.config.maxHeldPolls, env.sources.maxHeldPolls]).toEqual([5000, 'env'])
  expect(() => resolveConfig(args('--max-held-polls', '-1'), {}, NO_FILE)).toThrow(UsageError)
})
