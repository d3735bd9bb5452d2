import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
} from '@simplewebauthn/browser'
import { deviceLabel } from '../../../src/shared/device.ts'
import * as client from './client.ts'
import type { Me, Passkey } from './types.ts'

/** The passkey ceremonies: options from the server, the browser's prompt, the server verifies. */

export const passkeysSupported = () => browserSupportsWebAuthn()

/** A name the person will recognise in their device lists: "Chrome on Android". */
export const deviceName = (): string => deviceLabel(navigator.userAgent) ?? 'Browser'

export async function logInWithPasskey(): Promise<Me> {
  const { challenge_id, options } = await client.passkeyLoginOptions()
  const response = await startAuthentication({ optionsJSON: options })
  return client.passkeyLogin(challenge_id, response)
}

/** Creates the account and its first passkey in one go; the server starts a session. */
export async function signUpWithPasskey(request: client.SignUpRequest): Promise<Me> {
  const { challenge_id, options } = await client.passkeySignUpOptions(request)
  const response = await startRegistration({ optionsJSON: options })
  return client.passkeySignUp(challenge_id, response, deviceName())
}

/** Enrols a passkey for the account a sign-in link is for; the server starts a session. */
export async function signInWithLink(code: string): Promise<Me> {
  const { challenge_id, options } = await client.signInLinkOptions(code)
  const response = await startRegistration({ optionsJSON: options })
  return client.signInWithLink(challenge_id, response, deviceName())
}

export async function addPasskey(): Promise<Passkey> {
  const { challenge_id, options } = await client.newPasskeyOptions()
  const response = await startRegistration({ optionsJSON: options })
  return client.newPasskey(challenge_id, response, deviceName())
}
