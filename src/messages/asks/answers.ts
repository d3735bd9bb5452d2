import { fail } from '../../core/errors.ts'
import type { ApprovalAnswer } from '../../shared/blocks.ts'
import { inputBlocks, optionValue } from '../blocks.ts'
import { LIMITS } from '../limits.ts'
import type { Block, MessageBody } from '../schema.ts'

/**
 * Answers, as PRODUCT.md shapes them: one input block → that input's value; several → an
 * object keyed by block id. A value left out of an optional input is `null` (a toggle that was
 * not touched is `false`, as it shows).
 */
export function validateAnswer(body: MessageBody, answer: unknown): unknown {
  if (answer === undefined) throw fail.invalid('answer', 'is required')
  const bytes = Buffer.byteLength(JSON.stringify(answer))
  if (bytes > LIMITS.answerBytes) {
    throw fail.invalid('answer', `is ${bytes} bytes; the limit is ${LIMITS.answerBytes}`)
  }
  const inputs = inputBlocks(body)
  if (inputs.length === 1) return checkValue(inputs[0] as Block, answer, 'answer')
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    throw fail.invalid('answer', 'must be an object keyed by input block id')
  }
  const given = answer as Record<string, unknown>
  const ids = new Set(inputs.map((b) => b.id as string))
  for (const key of Object.keys(given)) {
    if (!ids.has(key)) throw fail.invalid(`answer.${key}`, 'is not an input of this question')
  }
  // Own keys only, and built with fromEntries: block ids are the agent's strings, and one named
  // `constructor` or `__proto__` must not read from, or write to, Object.prototype.
  return Object.fromEntries(
    inputs.map((block) => {
      const id = block.id as string
      const value = Object.hasOwn(given, id) ? given[id] : undefined
      return [id, checkValue(block, value, `answer.${id}`)]
    }),
  )
}

function checkValue(block: Block, value: unknown, field: string): unknown {
  const required = block.required === true
  const absent = value === undefined || value === null
  switch (block.type) {
    case 'choice':
      return checkChoice(block, value, field)
    case 'text_input':
      if (absent || value === '') {
        if (required) throw fail.invalid(field, 'is required')
        return absent ? null : ''
      }
      if (typeof value !== 'string') throw fail.invalid(field, 'must be a string')
      return value
    case 'number_input': {
      if (absent) {
        if (required) throw fail.invalid(field, 'is required')
        return null
      }
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw fail.invalid(field, 'must be a number')
      }
      const { min, max } = block as { min?: number; max?: number }
      if (min !== undefined && value < min) throw fail.invalid(field, `must be at least ${min}`)
      if (max !== undefined && value > max) throw fail.invalid(field, `must be at most ${max}`)
      return value
    }
    case 'toggle':
      if (absent) return false
      if (typeof value !== 'boolean') throw fail.invalid(field, 'must be true or false')
      return value
    case 'approval':
      return checkApproval(block, value, field)
    case 'confirm':
      // A lone confirm is answered by pressing it; among other inputs it may stay unpressed.
      if (absent && field !== 'answer') return null
      if (value !== true) throw fail.invalid(field, 'must be true (the confirm button pressed)')
      return true
    default:
      // An html question answers with whatever JSON value its embed passed to reply().
      if (value === undefined) throw fail.invalid(field, 'is required')
      return value
  }
}

function checkChoice(block: Block, value: unknown, field: string): unknown {
  const options = block.options as { label: string; value?: string }[]
  const allowed = new Set(options.map(optionValue))
  const check = (v: unknown, at: string) => {
    if (typeof v !== 'string') throw fail.invalid(at, 'must be a string')
    if (allowed.has(v)) return v
    if (block.other === true && v.trim() !== '') return v
    throw fail.invalid(at, `"${v}" is not one of the options`)
  }
  const required = block.required === true
  if (block.multi === true) {
    if (value === undefined || value === null) {
      if (required) throw fail.invalid(field, 'is required')
      return []
    }
    if (!Array.isArray(value)) throw fail.invalid(field, 'must be an array for a multi choice')
    if (required && value.length === 0) throw fail.invalid(field, 'pick at least one option')
    const picked = value.map((v, i) => check(v, `${field}[${i}]`))
    if (new Set(picked).size !== picked.length) throw fail.invalid(field, 'repeats an option')
    return picked
  }
  if (value === undefined || value === null) {
    // A lone choice is answered by picking; among other inputs it may stay empty unless required.
    if (required || field === 'answer') throw fail.invalid(field, 'is required')
    return null
  }
  return check(value, field)
}

const APPROVAL_KEYS = new Set(['decision', 'scope', 'message'])

/**
 * `{ decision, scope?, message? }`, nothing else: what the agent acts on must be exactly what the
 * person chose. `scope` only from the approval's `scopes`; stored as given (no scope is "once").
 */
function checkApproval(block: Block, value: unknown, field: string): ApprovalAnswer {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw fail.invalid(field, 'must be an object: { "decision": "allow" | "deny", ... }')
  }
  const given = value as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (!APPROVAL_KEYS.has(key)) {
      throw fail.invalid(`${field}.${key.slice(0, 64)}`, 'is not a field of an approval answer')
    }
  }
  const { decision, scope, message } = given
  if (decision !== 'allow' && decision !== 'deny') {
    throw fail.invalid(`${field}.decision`, 'must be "allow" or "deny"')
  }
  const answer: ApprovalAnswer = { decision }
  if (scope !== undefined) {
    const offered = (block.scopes as string[] | undefined) ?? ['once']
    if (typeof scope !== 'string' || !offered.includes(scope)) {
      throw fail.invalid(
        `${field}.scope`,
        `must be one of the offered scopes: ${offered.join(', ')}`,
      )
    }
    answer.scope = scope as ApprovalAnswer['scope']
  }
  if (message !== undefined) {
    if (typeof message !== 'string') throw fail.invalid(`${field}.message`, 'must be a string')
    if (message.length > LIMITS.titleChars * 4) {
      throw fail.invalid(`${field}.message`, `must be at most ${LIMITS.titleChars * 4} characters`)
    }
    answer.message = message
  }
  return answer
}

/** The answer a question gets when it expires: each input's `default`, else null. */
export function defaultsAnswer(body: MessageBody): unknown {
  const inputs = inputBlocks(body)
  const fallback = (b: Block) => {
    if (b.default !== undefined) return b.default
    if (b.type === 'toggle') return false
    if (b.type === 'choice' && b.multi === true) return []
    return null
  }
  if (inputs.length === 1) return fallback(inputs[0] as Block)
  return Object.fromEntries(inputs.map((b) => [b.id as string, fallback(b)]))
}
