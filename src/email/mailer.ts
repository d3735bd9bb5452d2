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
