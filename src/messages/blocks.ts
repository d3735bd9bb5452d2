import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { fail, pointerToField } from '../core/errors.ts'
import { isInput } from '../shared/blocks.ts'
import { LIMITS } from './limits.ts'
import { type Block, KnownBlocks, type KnownBlockType, type MessageBody } from './schema.ts'

export const inputBlocks = (body: MessageBody): Block[] =>
  (body.blocks ?? []).filter((b) => isInput(b as Block)) as Block[]

const isKnown = (type: string): type is KnownBlockType => Object.hasOwn(KnownBlocks, type)

/**
 * Each known block's schema compiled once, on its first use: a compiled check is ~0.03 µs
 * where walking the schema for its errors is ~3.5 µs a block, on every block of every send
 * (bench/README.md). The errors are walked only for a block that fails.
 */
const compiled = new Map<KnownBlockType, TypeCheck<(typeof KnownBlocks)[KnownBlockType]>>()
function checkOf(type: KnownBlockType): TypeCheck<(typeof KnownBlocks)[KnownBlockType]> {
  let check = compiled.get(type)
  if (!check) {
    check = TypeCompiler.Compile(KnownBlocks[type])
    compiled.set(type, check)
  }
  return check
}

export interface BlockRules {
  /** Where the blocks sit in the request, for error fields: `body.blocks`. */
  field: string
  /** Whether input blocks are allowed here (not in the person's messages, nor in pins). */
  inputs: 'allowed' | string
  /** True when the file exists in the message's channel. */
  fileInChannel: (fileId: string) => boolean
}

/**
 * Validates a whole message body: known blocks against their schema and rules, unknown
 * block types only for `type` and `id`. Throws a 400 naming the first invalid field.
 */
export function validateBody(body: MessageBody, rules: BlockRules): void {
  const bytes = Buffer.byteLength(JSON.stringify(body))
  if (bytes > LIMITS.bodyBytes) {
    throw fail.invalid('body', `is ${bytes} bytes; the limit is ${LIMITS.bodyBytes}`)
  }
  const ids = new Set<string>()
  ;(body.blocks ?? []).forEach((raw, i) => {
    const block = raw as Block
    const at = `${rules.field}[${i}]`
    if (typeof block.id === 'string') {
      if (ids.has(block.id))
        throw fail.invalid(`${at}.id`, `"${block.id}" is used by another block`)
      ids.add(block.id)
    }
    // Only the server writes these, so what the app shows under a fingerprint is the server's.
    if (block.type === 'secret_request') {
      throw fail.invalid(`${at}.type`, 'secret requests are made with POST /v1/secrets')
    }
    if (isKnown(block.type)) validateKnown(block, at, rules)
  })
  const approval = (body.blocks ?? []).findIndex((b) => (b as Block).type === 'approval')
  if (approval >= 0 && inputBlocks(body).length > 1) {
    throw fail.invalid(
      `${rules.field}[${approval}].type`,
      'an approval must be the only input of its message',
    )
  }
}

function validateKnown(block: Block, at: string, rules: BlockRules): void {
  const type = block.type as KnownBlockType
  if (!checkOf(type).Check(block)) {
    const error = Value.Errors(KnownBlocks[type], block).First()
    if (error) throw fail.invalid(`${at}${fieldSuffix(error.path)}`, describe(error.message))
    throw fail.invalid(at, `is not a valid ${type} block`)
  }

  if (isInput(block)) {
    if (rules.inputs !== 'allowed') throw fail.invalid(`${at}.type`, rules.inputs)
    if (typeof block.id !== 'string') throw fail.invalid(`${at}.id`, 'input blocks need an id')
  }
  switch (block.type) {
    case 'table':
      validateTable(block, at)
      break
    case 'choice':
      validateChoice(block, at)
      break
    case 'number_input':
      validateNumberInput(block, at)
      break
    case 'approval':
      validateApproval(block, at)
      break
    case 'image':
    case 'file':
      if (!rules.fileInChannel(block.file_id as string)) {
        throw fail.invalid(`${at}.file_id`, 'no such file in this channel; upload it first')
      }
      break
  }
}

/** `/options/0/label` → `.options[0].label`, to append to the block's own field. */
const fieldSuffix = (pointer: string) => pointerToField(`/x${pointer}`).slice(1)

/** TypeBox says "Expected required property"; say it the way people read it. */
function describe(message: string): string {
  const m = message.replace(/^Expected required property$/, 'is required')
  return m.charAt(0).toLowerCase() + m.slice(1)
}

function validateTable(block: Block, at: string): void {
  const columns = block.columns as unknown[]
  ;(block.rows as unknown[][]).forEach((row, r) => {
    if (row.length !== columns.length) {
      throw fail.invalid(
        `${at}.rows[${r}]`,
        `has ${row.length} cells; the table has ${columns.length} columns`,
      )
    }
  })
}

/** The value an option answers with: its `value`, else its `label`. */
export const optionValue = (o: { label: string; value?: string }) => o.value ?? o.label

function validateChoice(block: Block, at: string): void {
  const options = block.options as { label: string; value?: string }[]
  const values = new Set<string>()
  options.forEach((o, i) => {
    const v = optionValue(o)
    if (values.has(v)) throw fail.invalid(`${at}.options[${i}]`, `value "${v}" is used twice`)
    values.add(v)
  })
  const def = block.default
  if (def === undefined) return
  if (Array.isArray(def) !== (block.multi === true)) {
    throw fail.invalid(
      `${at}.default`,
      block.multi ? 'must be an array for a multi choice' : 'must be a string',
    )
  }
  for (const v of Array.isArray(def) ? def : [def]) {
    if (!values.has(v as string) && block.other !== true) {
      throw fail.invalid(`${at}.default`, `"${v}" is not one of the options`)
    }
  }
}

function validateApproval(block: Block, at: string): void {
  // Silence is never consent: an approval that expires is answered null, never "allow".
  if (block.default !== undefined) {
    throw fail.invalid(`${at}.default`, 'an approval takes no default; silence is never consent')
  }
  if (typeof block.summary === 'string' && /[\r\n]/.test(block.summary)) {
    throw fail.invalid(`${at}.summary`, 'must be one line (it is the notification text)')
  }
  const scopes = block.scopes as string[] | undefined
  if (scopes !== undefined) {
    if (new Set(scopes).size !== scopes.length)
      throw fail.invalid(`${at}.scopes`, 'repeats a scope')
    if (!scopes.includes('once')) {
      throw fail.invalid(`${at}.scopes`, 'must offer "once" (["once"] or ["once", "session"])')
    }
  }
}

function validateNumberInput(block: Block, at: string): void {
  const { min, max } = block as { min?: number; max?: number; default?: number }
  if (min !== undefined && max !== undefined && min > max) {
    throw fail.invalid(`${at}.min`, 'must not be greater than max')
  }
  const def = block.default as number | undefined
  if (def === undefined) return
  if ((min !== undefined && def < min) || (max !== undefined && def > max)) {
    throw fail.invalid(`${at}.default`, 'must be within min and max')
  }
}
