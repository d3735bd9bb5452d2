import { afterAll, describe, expect, test } from 'bun:test'
import { makeCli, removeHome } from './live.ts'

/**
 * What a CI job needs from `hark help` alone: how to connect without a config file
 * (HARK_URL, HARK_TOKEN), that --json makes stdout one JSON document, and what each exit code
 * means (issue 16, defect 4). No server: help needs none.
 */
const cli = makeCli()
afterAll(() => removeHome(cli))

describe('help for scripts and CI', () => {
  test('the top-level help and every command help name the environment, --json and exit codes', async () => {
    for (const args of [
      ['help'],
      ['--help'],
      ['help', 'ask'],
      ['ask', '--help'],
      ['help', 'send'],
    ]) {
      const out = await cli.run(args)
      expect({ args, code: out.code }).toEqual({ args, code: 0 })
      const text = out.stdout.replace(/\s+/g, ' ')
      expect(text).toContain('HARK_URL')
      expect(text).toContain('HARK_TOKEN')
      expect(text).toMatch(/--json +print one JSON document on stdout/)
      expect(text).toMatch(
        /Exit codes: 0 ok 1 error .+ 2 usage.+ 4 not connected.+ 124 a wait .+ 130 interrupted/,
      )
    }
  })
})
