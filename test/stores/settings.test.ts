import { expect, test } from 'bun:test'
import { pgSettingsStore } from '../../src/people/pg-settings-store.ts'
import { settingsStore } from '../../src/people/settings-store.ts'
import { describeStore } from './engines.ts'

describeStore('settings store', { sqlite: settingsStore, postgres: pgSettingsStore }, (engine) => {
  test('get is undefined until set; set replaces; remove forgets; keys are exact', async () => {
    const e = engine()
    expect(await e.read((s) => s.get('registration'))).toBeUndefined()
    await e.write((s) => s.set('registration', 'open'))
    expect(await e.read((s) => s.get('registration'))).toBe('open')
    expect(await e.read((s) => s.get('Registration'))).toBeUndefined()
    await e.write((s) => s.set('registration', 'invite'))
    expect(await e.read((s) => s.get('registration'))).toBe('invite')
    expect(await e.rows('SELECT key FROM settings')).toEqual([{ key: 'registration' }])
    await e.write((s) => s.remove('registration'))
    await e.write((s) => s.remove('registration')) // a missing key is no error
    expect(await e.read((s) => s.get('registration'))).toBeUndefined()
  })

  test('values are kept byte for byte: empty, JSON, unicode', async () => {
    const e = engine()
    const json = JSON.stringify({ hash: 'ab'.repeat(32), expires_at: 8_640_000_000_000_000 })
    await e.write(async (s) => {
      await s.set('empty', '')
      await s.set('setup', json)
      await s.set('ünï', 'naïve — ✓')
    })
    expect(await e.read((s) => s.get('empty'))).toBe('')
    expect(await e.read((s) => s.get('setup'))).toBe(json)
    expect(await e.read((s) => s.get('ünï'))).toBe('naïve — ✓')
  })

  test('sets of one key racing: one row, one of the values, no error', async () => {
    const e = engine()
    const values = ['a', 'b', 'c', 'd']
    await Promise.all(values.map((v) => e.write((s) => s.set('k', v))))
    expect(await e.rows('SELECT value FROM settings WHERE key = ?', 'k')).toHaveLength(1)
    expect(values).toContain((await e.read((s) => s.get('k'))) as string)
  })
})
