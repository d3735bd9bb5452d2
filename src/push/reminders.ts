import type { Ctx, Tx } from '../core/context.ts'
import type { MessageBody } from '../messages/schema.ts'
import type { DueReminder } from './store.ts'

/**
 * Email reminders: a question still open N minutes after it was asked is mailed once to its
 * person (who chose N). The mail links to the question through the base URL only. Only proven
 * addresses get mail (`users.email_verified`, filtered in `dueReminders`): a passkey sign-up can
 * name any address, and Hark must not mail someone who never asked for it.
 */
export function reminderMail(ctx: Ctx, r: DueReminder) {
  const body = JSON.parse(r.body) as MessageBody
  const what = body.title ?? body.text?.split('\n')[0] ?? 'a question'
  const link = `${ctx.config.baseUrl}/c/${encodeURIComponent(r.channel_id)}#${encodeURIComponent(r.message_id)}`
  return {
    to: r.email,
    subject: `${r.channel_label} is waiting for your answer`,
    text: [
      `${r.channel_label} asked you something and is still waiting:`,
      '',
      `    ${what.slice(0, 200)}`,
      '',
      'Answer it here:',
      link,
      '',
      'You get this mail because you asked Hark to email questions that wait unanswered;',
      'change it under Settings, Notifications.',
      '',
    ].join('\n'),
  }
}

/** Mails every reminder that fell due; each question is marked first, so it is mailed once. */
export async function sendDueReminders(ctx: Ctx, tx: Tx): Promise<number> {
  const mailer = ctx.mailer
  if (!mailer) return 0
  const now = ctx.clock.now()
  let sent = 0
  for (const r of await tx.store.push.dueReminders(now)) {
    if ((await tx.store.push.reminded(r.message_id, now)) === 0) continue
    sent++
    // Once the marks are committed: a unit the database aborts and runs again (a deadlock with
    // another instance's marks) must not have mailed already.
    tx.after(() => {
      mailer.send(reminderMail(ctx, r)).catch((error) => {
        ctx.log.warn(`email reminder for ${r.message_id} failed: ${(error as Error).message}`)
      })
    })
  }
  return sent
}
