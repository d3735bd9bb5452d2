import { describe, expect, test } from 'bun:test'
import { createSmtpMailer } from '../../src/core/mailer.ts'
import { startMailTrap } from './mail-trap.ts'

const mail = { to: 'ada@example.com', subject: 'Hello', text: 'Line one\nLine two\n' }

describe('createSmtpMailer', () => {
  test('refuses what is not an smtp:// or smtps:// URL', () => {
    expect(() => createSmtpMailer('mail.example.com', 'h@example.com')).toThrow('smtp://')
    expect(() => createSmtpMailer('https://mail.example.com', 'h@example.com')).toThrow(
      'must start with smtp:// or smtps://',
    )
    expect(() => createSmtpMailer('smtp://', 'h@example.com')).toThrow()
  })

  test('sends from the given address to a real SMTP listener', async () => {
    const trap = await startMailTrap()
    try {
      await createSmtpMailer(trap.url, 'hark@example.com').send(mail)
      const got = await trap.next('ada@example.com')
      expect(got.from).toBe('hark@example.com')
      expect(got.subject).toBe('Hello')
      expect(got.text.trim()).toBe('Line one\nLine two')
    } finally {
      await trap.close()
    }
  })

  test('logs in with the credentials in the URL (percent-encoded)', async () => {
    const auth = { user: 'hark@example.com', pass: 'p@ss:w/rd%' }
    const trap = await startMailTrap({ auth })
    const port = new URL(trap.url).port
    const userinfo = `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}`
    try {
      await createSmtpMailer(`smtp://${userinfo}@127.0.0.1:${port}`, 'hark@example.com').send(mail)
      expect((await trap.next('ada@example.com')).subject).toBe('Hello')
      const wrong = createSmtpMailer(`smtp://hark:nope@127.0.0.1:${port}`, 'hark@example.com')
      await expect(wrong.send(mail)).rejects.toThrow()
    } finally {
      await trap.close()
    }
  })

  test('smtps:// speaks TLS from the start and checks the certificate', async () => {
    const trap = await startMailTrap({ secure: true })
    try {
      // smtp-server's built-in certificate is self-signed: refused unless told otherwise.
      await expect(createSmtpMailer(trap.url, 'hark@example.com').send(mail)).rejects.toThrow()
      const lenient = `${trap.url}?tls.rejectUnauthorized=false`
      await createSmtpMailer(lenient, 'hark@example.com').send(mail)
      expect((await trap.next('ada@example.com')).subject).toBe('Hello')
    } finally {
      await trap.close()
    }
  })
})
