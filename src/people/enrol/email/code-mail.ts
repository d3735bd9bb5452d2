import type { Ctx } from '../../../core/context.ts'
import type { OutgoingMail } from '../../../core/mailer.ts'
import { CODE_TTL_MS } from './codes.ts'

/** What the code completes, in the mail's words. */
export type CodeUse = 'login' | 'signup' | 'setup'

const SUBJECT: Record<CodeUse, string> = {
  login: 'Your Hark login code',
  signup: 'Your code to create a Hark account',
  setup: 'Your code to finish setting up Hark',
}

const FOR: Record<CodeUse, string> = {
  login: 'to log in to Hark',
  signup: 'to create your Hark account',
  setup: 'to finish setting up Hark and become its owner',
}

/**
 * The mail that carries a code: the code, what it is for, when it expires. The code stays out
 * of the subject, which lock screens show. The only link is the base URL: a Host header is
 * the requester's to choose, and would let anyone mail a link to their own site.
 */
export function codeMail(ctx: Ctx, to: string, use: CodeUse, code: string): OutgoingMail {
  const minutes = CODE_TTL_MS / 60_000
  const text = [
    `Your code ${FOR[use]} is:`,
    '',
    `    ${code}`,
    '',
    `It expires in ${minutes} minutes and works once. Enter it where you asked for it:`,
    ctx.config.baseUrl,
    '',
    // Asking again does not cancel a code: any that has not expired works (and ends the others).
    `If you got several codes, any from the last ${minutes} minutes works.`,
    '',
    'If you did not ask for this code, ignore this mail: nothing happens without it.',
    '',
  ].join('\n')
  return { to, subject: SUBJECT[use], text }
}
