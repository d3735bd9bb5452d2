import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser'
import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
} from '@simplewebauthn/browser'
import { post } from './api.ts'
import type { Me, Passkey } from './types.ts'

/** The passkey ceremonies: options from the server, the browser's prompt, the server verifies. */

interface Ceremony<O> {
  challenge_id: string
  options: O
}

export const passkeysSupported = () => browserSupportsWebAuthn()

/** A name the person will recognise in their passkey list: "Chrome on Android". */
export function deviceName(): string {
  const ua = navigator.userAgent
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /Firefox\//.test(ua)
      ? 'Firefox'
      : /Chrome\//.test(ua)
        ? 'Chrome'
        : /Safari\//.test(ua)
          ? 'Safari'
          : 'Browser'
  const os = /Android/.test(ua)
    ? 'Android'
    : /iPhone|iPad/.test(ua)
      ? 'iOS'
      : /Mac OS X/.test(ua)
        ? 'macOS'
        : /Windows/.test(ua)
          ? 'Windows'
          : /Linux/.test(ua)
            ? 'Linux'
            : ''
  return os ? `${browser} on ${os}` : browser
}

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
