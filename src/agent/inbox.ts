import type { DeletedMessage, Message } from '../messages/schema.ts'
import type { AgentClient } from './client.ts'
import { describeFailure } from './failures.ts'
import { type Env, loadConfig, updateConfig } from './profiles.ts'
import type { Session } from './session.ts'
import { deadlineAfter, type PollOptions, pollUntil } from './waiting.ts'

/**
 * The person's messages to the agent, read from the change feed (`sender=human`). The place
 * reached is kept per token in the config file, so each read shows what is new since the last
 * one; a peek neither marks messages seen nor moves the place, so the next read shows them again.
 */
export interface InboxOptions {
  peek?: boolean
  /** Start from the beginning of the channel instead of the stored place. */
  all?: boolean
  /**
   * Told once when the place reached cannot be kept (a read-only config directory): the
   * messages read are still the answer, but the next read shows them again.
   */
  onWarning?: (line: string) => void
}

const placeKey = (token: string) =>
  new Bun.CryptoHasher('sha256').update(token).digest('hex').slice(0, 16)

function storedPlace(env: Env, token: string): number {
  return loadConfig(env).inbox?.[placeKey(token)] ?? 0
}

function storePlace(env: Env, token: string, cursor: number): void {
  updateConfig(env, (c) => {
    c.inbox = { ...c.inbox, [placeKey(token)]: cursor }
  })
}

/**
 * Worth showing: live messages the agent has not yet taken up. The agent's own `working` and
 * `done` acknowledgments are changes too, and would otherwise bring a handled message back.
 */
const isNew = (m: Message | DeletedMessage): m is Message =>
  !('deleted' in m) && m.state !== 'working' && m.state !== 'done'

/** Every page from `since` (the first held up to `wait`), each message once in its last form. */
async function readPages(
  client: AgentClient,
  since: number,
  peek: boolean,
  wait: number,
  signal?: AbortSignal,
): Promise<{ messages: Message[]; cursor: number }> {
  const latest = new Map<string, Message | DeletedMessage>()
  let cursor = since
  for (;;) {
    const page = await client.feed({ since: cursor, sender: 'human', peek, wait }, signal)
    for (const m of page.messages) {
      latest.delete(m.id)
      latest.set(m.id, m)
    }
    cursor = page.cursor
    if (!page.has_more) break
    wait = 0
  }
  return { messages: [...latest.values()].filter(isNew), cursor }
}

/** The inbox of a session's token: `hark inbox` and the MCP tool `read_messages` read it. */
export class Inbox {
  private cursor: number
  private readonly client: AgentClient
  private readonly token: string
  private warned = false

  constructor(
    session: Pick<Session, 'client' | 'token'>,
    private readonly env: Env,
    private readonly options: InboxOptions = {},
  ) {
    this.client = session.client
    this.token = session.token
    this.cursor = options.all ? 0 : storedPlace(env, session.token)
  }

  get place(): number {
    return this.cursor
  }

  /** The next new messages, waiting until `deadline` for some (none when it passes). */
  async next(poll: PollOptions): Promise<Message[]> {
    const peek = this.options.peek === true
    const found = await pollUntil(async (wait, signal) => {
      const read = await readPages(this.client, this.cursor, peek, wait, signal)
      const moved = read.cursor !== this.cursor
      // Moved on here first: a `--follow` whose place cannot be stored must not repeat itself.
      this.cursor = read.cursor
      if (!peek && moved) this.keepPlace()
      return read.messages.length > 0 ? read.messages : undefined
    }, poll)
    return found ?? []
  }

  /**
   * Stores the place, or says why it could not. The error never leaves: inside the poll, an fs
   * error (it has a `.code`) would pass for an outage, and the messages read would be lost.
   */
  private keepPlace(): void {
    try {
      storePlace(this.env, this.token, this.cursor)
    } catch (error) {
      if (this.warned) return
      this.warned = true
      this.options.onWarning?.(
        `cannot save where the inbox got to: ${describeFailure(error).message}; the next read shows these messages again`,
      )
    }
  }

  /** What is new; when nothing is, waits up to `waitMs` for a message. */
  read(waitMs: number, onOutage?: (line: string) => void): Promise<Message[]> {
    return this.next({ deadline: deadlineAfter(waitMs), onOutage })
  }
}
