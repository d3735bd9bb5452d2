import { UsageError } from '../core/errors.ts'
import {
  type AgentClient,
  createAgentClient,
  createEnrolmentClient,
  type EnrolmentClient,
} from './client.ts'
import { notConnected } from './failures.ts'
import { DEFAULT_PROFILE, type Env, loadConfig, type Profile } from './profiles.ts'
import { DEFAULT_ATTEMPTS } from './retry.ts'
import { requestTimeoutMs } from './timeouts.ts'

/**
 * Where the agent's connection comes from: the profile in the config file, overridden field by
 * field by `HARK_URL` and `HARK_TOKEN` (so a CI job needs no file at all).
 */
export interface Connection {
  profile: string
  url?: string
  token?: string
  stored: Profile
}

export function resolveConnection(env: Env, profile: string): Connection {
  const stored = loadConfig(env).profiles[profile] ?? {}
  return {
    profile,
    url: env.HARK_URL || stored.url,
    token: env.HARK_TOKEN || stored.token,
    stored,
  }
}

export interface Session {
  profile: string
  url: string
  token: string
  client: AgentClient
}

/** Retry notices go to stderr; stdout is for results. Every attempt is bounded in time. */
function retrying(warn: (line: string) => void, attempts = DEFAULT_ATTEMPTS) {
  return {
    attempts,
    onRetry: (reason: string, delayMs: number, attempt: number) =>
      warn(`${reason}; retrying in ${(delayMs / 1000).toFixed(1)} s (${attempt}/${attempts - 1})`),
  }
}

/**
 * An agent client for `url` and `token`; `attempts: 1` reports an outage at once. Each request
 * is bounded by `timeoutMs` (`HARK_REQUEST_TIMEOUT`, else 30 s; long-polls add their wait).
 */
export function agentClientFor(
  url: string,
  token: string | undefined,
  warn: (line: string) => void,
  attempts?: number,
  timeoutMs = requestTimeoutMs(process.env),
): AgentClient {
  return createAgentClient({
    baseUrl: normaliseUrl(url),
    token,
    retry: retrying(warn, attempts),
    timeoutMs,
  })
}

/** A connected client, or exit 4 with how to connect. */
export function openSession(env: Env, profile: string, warn: (line: string) => void): Session {
  const c = resolveConnection(env, profile)
  if (!c.url || !c.token) throw notConnected(profile)
  const url = normaliseUrl(c.url)
  const client = agentClientFor(url, c.token, warn, undefined, requestTimeoutMs(env))
  return { profile, url, token: c.token, client }
}

/** A client with no token, for pairing and joining. */
export function enrolmentClient(url: string, warn: (line: string) => void): EnrolmentClient {
  return createEnrolmentClient({
    baseUrl: normaliseUrl(url),
    retry: retrying(warn),
    timeoutMs: requestTimeoutMs(process.env),
  })
}

/** `https://host/prefix/` → `https://host/prefix`; anything but http(s) is a usage error. */
export function normaliseUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(`"${raw}" is not a URL (expected https://host or http://host:port)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`"${raw}" must start with http:// or https://`)
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '')
}

export const profileName = (flag: string | undefined, env: Env) =>
  flag || env.HARK_PROFILE || DEFAULT_PROFILE
