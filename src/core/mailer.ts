import { createTransport } from 'nodemailer'

/** Outgoing email, as the services see it; `createSmtpMailer` (nodemailer) is the real one. */
export interface OutgoingMail {
  to: string
  subject: string
  text: string
  html?: string
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>
}

/**
 * A mailer that hands every mail to one SMTP server, named by a URL with the credentials in it:
 * `smtp://user:pass@host:587` (STARTTLS when the server offers it) or `smtps://…:465` (TLS from
 * the first byte). Percent-encode special characters in the user and password. nodemailer's
 * query options (`?tls.rejectUnauthorized=false`, `?requireTLS=true`) pass through.
 */
export function createSmtpMailer(url: string, from: string): Mailer {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new Error('the SMTP URL must look like smtp://user:pass@host:587 or smtps://host:465')
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') {
    throw new Error(`the SMTP URL must start with smtp:// or smtps:// (got ${parsed.protocol}//)`)
  }
  if (!parsed.hostname) throw new Error('the SMTP URL names no host')
  const transport = createTransport({
    url,
    // nodemailer waits minutes by default; a stuck server should fail a sign-up in seconds.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  })
  return {
    async send(mail) {
      await transport.sendMail({ from, ...mail })
    },
  }
}
