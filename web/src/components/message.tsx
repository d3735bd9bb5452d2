import { Component } from 'preact'
import { messageTime } from '../lib/message-time.ts'
import type { Block, Message } from '../lib/types.ts'
import { ApprovalQuestion, approvalOf } from './approval/index.tsx'
import { DisplayBlock } from './blocks.tsx'
import { Question } from './question/index.tsx'

/** One message in a thread (or a pin): title, text, blocks, and its state line. */

const STATE_TEXT: Record<string, string> = {
  seen: 'Seen',
  working: 'Working on it…',
  done: 'Done',
}

interface MessageProps {
  message: Message
  onChange: (m: Message) => void
  /** The message a link pointed at (`/c/…#id`): marked so the eye finds it. */
  focused?: boolean
}

/**
 * A message renders again only when it changed (the feed keeps each unchanged message's object)
 * or its mark moved: a page of older messages put in front of a long thread, or one new message,
 * must not re-render the hundreds already shown (bench/web-speed.ts). `onChange` is left out of
 * the comparison: every caller passes a function that only hands the message to the feed's
 * state setter, so an older one does the same as a newer one.
 */
export class MessageView extends Component<MessageProps> {
  override shouldComponentUpdate(next: MessageProps): boolean {
    return next.message !== this.props.message || next.focused !== this.props.focused
  }
  override render() {
    return <MessageBody {...this.props} />
  }
}

function MessageBody({ message, onChange, focused }: MessageProps) {
  const { title, text } = message.body
  const blocks = (message.body.blocks ?? []) as Block[]
  const mine = message.sender === 'human'
  const state = mine ? (message.state ?? null) : undefined
  const edited = message.updated_at > message.created_at && !message.ask && !mine
  const approval = approvalOf(message)
  const time = messageTime(message.created_at)
  const classes = [
    'msg',
    mine ? 'mine' : 'agent',
    message.ask && `ask ask-${message.ask.status}`,
    approval && 'approval-msg',
    approval?.danger === true && 'danger',
    focused && 'focused',
  ]
  return (
    <article
      class={classes.filter(Boolean).join(' ')}
      data-id={message.id}
      aria-label={mine ? 'You wrote' : title ? `Agent: ${title}` : 'Agent message'}
    >
      {title && <h3 class="msg-title">{title}</h3>}
      {text && <p class="msg-text">{text}</p>}
      {approval ? (
        <ApprovalQuestion message={message} approval={approval} onAnswered={onChange} />
      ) : message.ask ? (
        <Question message={message} onAnswered={onChange} />
      ) : (
        blocks.map((b, i) => (
          <DisplayBlock key={b.id ?? `#${i}`} block={b} channelId={message.channel_id} />
        ))
      )}
      <footer class="msg-meta">
        <time dateTime={new Date(message.created_at).toISOString()} title={time.full}>
          {time.short}
        </time>
        {edited && <span> · edited</span>}
        {state !== undefined && (
          <span class={`msg-state state-${state ?? 'sent'}`}>
            {' · '}
            {state ? STATE_TEXT[state] : 'Sent'}
          </span>
        )}
      </footer>
    </article>
  )
}
