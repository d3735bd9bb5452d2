import { afterEach, describe, expect, test } from 'bun:test'
import { createSmtpMailer } from '../../src/core/mailer.ts'
import { type MailTrap, startMailTrap } from '../email/mail-trap.ts'
import { BASE, failsWith, TestClock } from '../harness.ts'
import { type PushFixture, startPushServer } from './fixture.ts'

let f: PushFixture
let trap: MailTrap | undefined
afterEach(async () => {
  await f?.close()
  await trap?.close()
  trap = undefined
})

const setMinutes = (fx: PushFixture, minutes: unknown) =>
  fx.s.person.call<{ minutes: number | null }>('PATCH', '/v1/app/push/email-reminders', {
    json: { minutes },
  })

describe('email reminders', () => {
  test('a question open N minutes is mailed once, with a link that opens it', async () => {
    const clock = new TestClock()
    trap = await startMailTrap()
    f = await startPushServer({ clock, mailer: trap })
    expect(await setMinutes(f, 10)).toEqual({ minutes: 10 })
    expect(await f.s.person.call('GET', '/v1/app/push/email-reminders')).toEqual({
      minutes: 10,
      available: true,
    })
    const { message } = await f.s.agent.send({
      body: {
        title: 'Merge the release branch?',
        blocks: [{ type: 'confirm', id: 'c', label: 'Merge' }],
      },
    })
    const { message: answered } = await f.s.agent.send({
      body: { text: 'answered soon', blocks: [{ type: 'confirm', id: 'c', label: 'OK' }] },
    })
    await f.s.agent.send({ body: { text: 'not a question' } })
    await f.s.person.answer(answered.id, true)
    clock.advance(9 * 60_000)
    expect(await f.s.ctx.push.tickReminders()).toBe(0)
    clock.advance(60_000)
    expect(await f.s.ctx.push.tickReminders()).toBe(1)
    const mail = await trap.next(f.s.ownerEmail)
    expect(mail.subject).toBe('Test agent is waiting for your answer')
    expect(mail.text).toContain('Merge the release branch?')
    expect(mail.text).toContain(`${BASE}/c/${f.s.channelId}#${message.id}`)
    clock.advance(60 * 60_000)
    expect(await f.s.ctx.push.tickReminders()).toBe(0) // once per question
    await Bun.sleep(100)
    expect(trap.to(f.s.ownerEmail)).toHaveLength(1)
  })

  test('only a proven address is mailed: none while the account is unverified', async () => {
    const clock = new TestClock()
    trap = await startMailTrap()
    f = await startPushServer({ clock, mailer: trap })
    await setMinutes(f, 1)
    // As after a passkey sign-up in open mode: nobody proved the address.
    const owner = await f.s.ctx.store.users.byEmail(f.s.ownerEmail)
    f.s.ctx.db.run('UPDATE users SET email_verified = 0 WHERE id = ?1', [owner?.id as string])
    await f.s.agent.send({ body: { blocks: [{ type: 'confirm', id: 'c', label: 'Go' }] } })
    clock.advance(5 * 60_000)
    expect(await f.s.ctx.push.tickReminders()).toBe(0)
    await f.s.ctx.store.users.markVerified(owner?.id as string)
    expect(await f.s.ctx.push.tickReminders()).toBe(1)
    expect((await trap.next(f.s.ownerEmail)).subject).toContain('waiting for your answer')
  })

  test('null turns it off; bad values are 400; without SMTP it is 503', async () => {
    const clock = new TestClock()
    f = await startPushServer({ clock })
    await failsWith(setMinutes(f, 5), 503)
    trap = await startMailTrap()
    f.s.ctx.mailer = createSmtpMailer(trap.url, 'hark@example.com')
    for (const bad of [0, -1, 1.5, 'ten', 7 * 24 * 60 + 1]) {
      const e = await failsWith(setMinutes(f, bad), 400)
      expect(e.field).toBe('minutes')
    }
    await setMinutes(f, 1)
    expect(await setMinutes(f, null)).toEqual({ minutes: null })
    await f.s.agent.send({ body: { blocks: [{ type: 'confirm', id: 'c', label: 'Go' }] } })
    clock.advance(5 * 60_000)
    expect(await f.s.ctx.push.tickReminders()).toBe(0)
  })

  test('questions asked before the setting was turned on are not mailed', async () => {
    const clock = new TestClock()
    trap = await startMailTrap()
    f = await startPushServer({ clock, mailer: trap })
    await f.s.agent.send({ body: { blocks: [{ type: 'confirm', id: 'c', label: 'Old' }] } })
    clock.advance(1000)
    await setMinutes(f, 1)
    clock.advance(5 * 60_000)
    expect(await f.s.ctx.push.tickReminders()).toBe(0)
  })
})
