import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { parseArgs } from '../../src/cli/args.ts'
import { baseUrlFrom, resolveConfig, SERVE_BOOLEANS, SERVE_VALUED } from '../../src/cli/settings.ts'
import { UsageError } from '../../src/core/errors.ts'
import { tempDir } from '../harness.ts'

// The HTTPS settings of `hark serve`: what --domain and --tls-cert change by themselves (port,
// HTTP port, base URL), and the combinations refused before anything starts.

const NO_FILE = { defaultFile: join(tempDir('hark-tls-settings-'), 'absent.env') }
const resolve = (argv: string[], env: Record<string, string> = {}) =>
  resolveConfig(parseArgs(argv, SERVE_VALUED, SERVE_BOOLEANS), env, NO_FILE).config
const refused = (argv: string[], env: Record<string, string> = {}) => {
  try {
    resolve(argv, env)
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError)
    return (error as Error).message
  }
  throw new Error(`accepted: ${argv.join(' ')}`)
}

describe('hark serve --domain', () => {
  test('listens on 443 and 80, and the base URL is https://DOMAIN', () => {
    const c = resolve(['--domain', 'Hark.Example.com, www.example.com.'])
    expect(c.domains).toEqual(['hark.example.com', 'www.example.com'])
    expect(c.port).toBe(443)
    expect(c.httpPort).toBe(80)
    expect(c.baseUrl).toBe('https://hark.example.com')
    expect(c.acmeDirectory).toBe('https://acme-v02.api.letsencrypt.org/directory')
  })

  test('another port shows in the base URL; HARK_DOMAIN and the admin commands agree', () => {
    const env = { HARK_DOMAIN: 'hark.example.com', HARK_PORT: '8443' }
    expect(resolve([], env).baseUrl).toBe('https://hark.example.com:8443')
    expect(baseUrlFrom(parseArgs([], [], []), env, NO_FILE)).toEqual({
      value: 'https://hark.example.com:8443',
      named: true,
    })
    expect(
      baseUrlFrom(parseArgs([], [], []), { HARK_DOMAIN: 'hark.example.com' }, NO_FILE).value,
    ).toBe('https://hark.example.com')
  })

  test.each([
    ['1.2.3.4', 'is an address'],
    ['hark.example.com:8443', 'is an address or has a port'],
    ['*.example.com', 'wildcard'],
    ['localhost', 'is not a host name'],
    ['-bad.example.com', 'is not a host name'],
    [',', 'at least one host name'],
  ])('refuses %s', (name, words) => {
    expect(refused(['--domain', name])).toContain(words)
  })

  test('refuses combinations that cannot work', () => {
    expect(refused(['--domain', 'a.example.com', '--tls-cert', 'c', '--tls-key', 'k'])).toContain(
      'not both',
    )
    expect(refused(['--tls-cert', 'c'])).toContain('go together')
    expect(refused(['--domain', 'a.example.com', '--http-port', 'off'])).toContain(
      'needs --http-port',
    )
    expect(refused(['--http-port', '80'])).toContain('needs --domain or --tls-cert')
    expect(
      refused(['--domain', 'a.example.com'], { HARK_DATABASE_URL: 'postgres://u:p@db/hark' }),
    ).toContain('behind a proxy')
    expect(refused(['--acme-directory', 'http://ca.example/dir'])).toContain('https://')
    expect(refused(['--acme-email', 'nobody'])).toContain('email address')
  })
})

describe('hark serve --tls-cert', () => {
  test('listens on 443 without a redirecting port unless asked', () => {
    const c = resolve(['--tls-cert', 'c.pem', '--tls-key', 'k.pem'])
    expect(c.port).toBe(443)
    expect(c.httpPort).toBeUndefined()
    expect(c.tlsCert?.endsWith('/c.pem')).toBe(true)
    expect(c.baseUrl).toBe('https://localhost')
    expect(resolve(['--tls-cert', 'c', '--tls-key', 'k', '--http-port', '8080']).httpPort).toBe(
      8080,
    )
  })

  test('without TLS settings nothing changes', () => {
    const c = resolve([])
    expect(c.port).toBe(8080)
    expect(c.baseUrl).toBe('http://localhost:8080')
    expect(c.domains).toBeUndefined()
  })
})
