import { fromNow } from '../../lib/format.ts'
import type { Block, Message } from '../../lib/types.ts'
import { givenLabel, idOf, labelOf, optionsOf, optionValue } from './answers.ts'

/** How one input's answer reads: option labels, On/Off, the text itself. */
function describe(b: Block, value: unknown): string {
  if (value === null || value === undefined) return b.type === 'confirm' ? 'Not confirmed' : '—'
  switch (b.type) {
    case 'choice': {
      const options = optionsOf(b)
      const name = (v: unknown) => options.find((o) => optionValue(o) === v)?.label ?? String(v)
      const list = Array.isArray(value) ? value.map(name) : [name(value)]
      return list.length ? list.join(', ') : '—'
    }
    case 'toggle':
      return value === true ? 'On' : 'Off'
    case 'confirm':
      return 'Confirmed'
    case 'text_input':
      return value === '' ? '(empty)' : String(value)
    case 'number_input':
      return String(value)
    default:
      return typeof value === 'string' ? value : JSON.stringify(value)
  }
}

/** A closed question: cancelled, or answered (by the person, or by expiry with the defaults). */
export function Outcome({ message, inputs }: { message: Message; inputs: Block[] }) {
  const ask = message.ask
  if (!ask) return null
  if (ask.status === 'cancelled') {
    return <p class="q-outcome cancelled">Cancelled by the agent.</p>
  }
  const answer = ask.answer
  const valueFor = (b: Block) =>
    inputs.length === 1 ? answer : (answer as Record<string, unknown> | null)?.[idOf(b)]
  const heading =
    ask.status === 'answered'
      ? `Answered${ask.answered_at ? ` ${fromNow(ask.answered_at)}` : ''}`
      : 'Expired — the agent got the defaults'
  // A question asked with proof: whether the agent, which checks the signature, can use it.
  const signed =
    ask.status === 'answered' && ask.request_hash !== undefined
      ? ask.proof !== undefined
      : undefined
  return (
    <div class={`q-outcome ${ask.status}`}>
      <p class="q-outcome-head">
        {heading}
        {signed !== undefined && (
          <span class={`ap-signed${signed ? '' : ' unsigned'}`}>
            {' · '}
            {signed ? 'signed with a passkey' : 'unsigned'}
          </span>
        )}
      </p>
      {answer !== undefined && (
        <dl>
          {inputs.map((b) => (
            <div key={idOf(b)}>
              {/* The only input, without a label: the question above is its label. */}
              {inputs.length === 1 && givenLabel(b) === undefined ? (
                <dt class="visually-hidden">Answer</dt>
              ) : (
                <dt>{labelOf(b)}</dt>
              )}
              <dd>{describe(b, valueFor(b))}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  )
}
