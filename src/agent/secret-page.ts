/**
 * A secret request's page in the app, and how Hark's hooks recognise its offer. Imports nothing:
 * the MCP server (cli/mcp/secret-page.ts) and the Claude Code hook (harnesses/claude.ts) both
 * use it.
 */

/**
 * The request's page in the app: its message in the agent's thread, the link a push for it
 * opens. The MCP server offers it through URL-mode elicitation (cli/mcp/secret-page.ts).
 */
export const secretPageUrl = (baseUrl: string, r: { channel_id: string; message_id: string }) =>
  `${baseUrl.replace(/\/+$/, '')}/c/${encodeURIComponent(r.channel_id)}#${encodeURIComponent(r.message_id)}`

/**
 * Whether a URL-mode elicitation is Hark's own offer of a secret request's page (its id is the
 * request's, its URL a thread message's). Hark's Elicitation hook steps aside for it: the phone
 * already has the request's card, so a second card linking to the first would only be noise. A
 * server that imitates it gains nothing: the hook then decides nothing, and the client asks.
 */
export function isSecretPageOffer(url: string, elicitationId: string | undefined): boolean {
  if (!elicitationId || !/^sec_[A-Za-z0-9]+$/.test(elicitationId)) return false
  try {
    const u = new URL(url)
    return /^\/c\/[^/]+$/.test(u.pathname) && /^#msg_[A-Za-z0-9]+$/.test(u.hash)
  } catch {
    return false
  }
}
