import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser'
import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
} from '@simplewebauthn/browser'
import { deviceLabel } from '../../../src/shared/device.ts'
import { post } from './api.ts'
import type { Me, Passkey } from './types.ts'

/** The passkey ceremonies: options from the server, the browser's prompt, the server verifies. */

interface Ceremony<O> {
  challenge_id: string
  options: O
}

export const passkeysSupported = () => browserSupportsWebAuthn()

/** A name the person will recognise in their device lists: "Chrome on Android". */
export const deviceName = (): string => deviceLabel(navigator.userAgent) ?? 'Browser'

export async function logInWithPasskey(): Promise<Me> {
  const { challenge_id, options } = await post<Ceremony<PublicKeyCredentialRequestOptionsJSON>>(
    '/v1/auth/passkey/login/options',
  )
  const response = await startAuthentication({ optionsJSON: options })
  const { user } = await post<{ user: Me }>('/v1/auth/passkey/login/verify', {
    challenge_id,
    response,
  })
  return user
}

export interface SignUpRequest {
  email: string
  name?: string
  setup_token?: string
  invite?: string
}

/** Creates the account and its first passkey in one go; the server starts a session. */
export async function signUpWithPasskey(req: SignUpRequest): Promise<Me> {
  const { challenge_id, options } = await post<Ceremony<PublicKeyCredentialCreationOptionsJSON>>(
    '/v1/auth/passkey/register/options',
    req,
  )
  const response = await startRegistration({ optionsJSON: options })
  const { user } = await post<{ user: Me }>('/v1/auth/passkey/register/verify', {
    challenge_id,
    response,
    name: deviceName(),
  })
  return user
}

export async function addPasskey(): Promise<Passkey> {
  const { challenge_id, options } = await post<Ceremony<PublicKeyCredentialCreationOptionsJSON>>(
    '/v1/app/passkeys/options',
  )
  const response = await startRegistration({ optionsJSON: options })
  const { passkey } = await post<{ passkey: Passkey }>('/v1/app/passkeys/verify', {
    challenge_id,
    response,
    name: deviceName(),
  })
  return passkey
}
