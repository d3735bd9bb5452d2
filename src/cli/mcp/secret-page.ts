import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { AgentClient } from '../../agent/client.ts'
import type { SecretRecord } from '../../messages/asks/secrets/service.ts'

/**
 * `request_secret` through URL-mode elicitation (MCP 2025-11-25): a client that declares
 * `elicitation.url` (Claude Code 2.1.330 does) is asked to offer the person the secret request's
 * page in the app, where the secret is typed, encrypted in the browser to this process's key and
 * signed by their passkey, exactly as from the thread. Nothing secret crosses the MCP
 * connection: the URL names the thread and the message, the value only ever reaches the server
 * as ciphertext, and the ciphertext is opened only with the person's signature over it
 * (agent/secrets.ts), as without elicitation. A client without `elicitation.url` gets
 * request_secret as before.
 */

/** Whether the connected client declared URL-mode elicitation in its initialize. */
export const offersLinks = (mcp: Server) =>
  mcp.getClientCapabilities()?.elicitation?.url !== undefined

/**
 * The app's base URL for the link: the server's public one (`/v1/info`), but only when it has the
 * origin this agent connects to (its HARK_URL), the one address it trusts with its token. A
 * server or a proxy on the way that answers another base URL would otherwise send the person to a
 * page of its choosing to type the secret into; then no link is offered (request_secret works
 * as without elicitation), and the card in the thread stays the way to answer.
 */
export async function linkBase(client: AgentClient, agentUrl: string): Promise<string | undefined> {
  try {
    const { base_url } = await client.info()
    return new URL(base_url).origin === new URL(agentUrl).origin ? base_url : undefined
  } catch {
    // The link is an extra: without the server's info (an older server, a moment's outage) the
    // request is made as without elicitation, and its own call reports any outage.
    return undefined
  }
}

/**
 * How long the client may hold the link open (its dialog), unanswered. Secret requests do not
 * expire, and the link is offered once per request (not once per 45 s call), so it is given
 * long; past it the request stays answerable from the thread.
 */
const LINK_OPEN_MS = 30 * 60_000

export interface SecretPage {
  /** The person declined the link at the client: the request was withdrawn. */
  readonly declined: boolean
  /** The request is over (received, cancelled): the client is told, its dialog closed. */
  settle(): void
}

/**
 * Offers `url` for `request` through the client, detached from the tool call (a call lasts at
 * most 45 s; the person's dialog should not close and reopen with each). What the client
 * answers:
 * - accept: the person went to the page; when the request is over the client is sent
 *   `notifications/elicitation/complete` for it;
 * - decline: the person refused at the terminal; the request is withdrawn (its card too), so
 *   the waiting call ends `cancelled`;
 * - cancel (dismissed, or a headless client without a hook answering it), a timeout, an error:
 *   nothing changes; the request stays open in the thread, as without elicitation.
 */
export function offerSecretPage(
  mcp: Server,
  client: AgentClient,
  request: SecretRecord,
  url: string,
): SecretPage {
  const stop = new AbortController()
  let state: 'open' | 'accepted' | 'over' = 'open'
  let declined = false
  const about = request.description ? ` (${request.description})` : ''
  mcp
    .elicitInput(
      {
        mode: 'url',
        elicitationId: request.id,
        url,
        message: `The agent asks for the secret "${request.name}"${about}. Open Hark to enter it: it is encrypted on your device for this agent alone and signed with your passkey. Enter it only if the page shows the fingerprint ${request.fingerprint}.`,
      },
      { signal: stop.signal, timeout: LINK_OPEN_MS },
    )
    .then(
      (result) => {
        if (state !== 'open') return
        if (result.action === 'accept') {
          state = 'accepted'
          return
        }
        state = 'over'
        if (result.action === 'decline') {
          declined = true
          // A refusal that fails to reach the server leaves the request open: the person can
          // still cancel it from the app, and the call reports what it finds.
          client.cancelSecret(request.id).catch(() => {})
        }
      },
      () => {
        state = 'over'
      },
    )
  return {
    get declined() {
      return declined
    },
    settle() {
      if (state === 'open') stop.abort()
      else if (state === 'accepted') {
        // A lost notification only leaves the client's "waiting" line up; the call has answered.
        mcp
          .createElicitationCompletionNotifier(request.id)()
          .catch(() => {})
      }
      state = 'over'
    },
  }
}
