import { createTransport } from 'nodemailer'
import { serviceUrl } from './service-url.ts'

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
  try {
    serviceUrl(url, ['smtp', 'smtps'])
  } catch (error) {
    throw new Error(
      `the SMTP URL (smtp://user:pass@host:587 or smtps://host:465): ${(error as Error).message}`,
    )
  }
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
