import type { Block } from '../../messages/schema.ts'

/**
 * An MCP elicitation's requested schema (a flat JSON Schema object of strings, numbers, integers,
 * booleans and enums, as the MCP spec allows) as Hark inputs, and the person's answer back as the
 * typed `content` the server asked for. A field Hark cannot show is left out: the form still
 * works, and the MCP server sees that field missing, as if the person had left it empty.
 */
interface FieldSchema {
  type?: unknown
  title?: unknown
  description?: unknown
  enum?: unknown
  enumNames?: unknown
  oneOf?: unknown
  items?: unknown
  minimum?: unknown
  maximum?: unknown
  default?: unknown
}

export interface ElicitationForm {
  blocks: Block[]
  /** Input id → the schema property it fills, and how to read its value back. */
  fields: { id: string; name: string; kind: 'string' | 'number' | 'integer' | 'boolean' | 'list' }[]
  required: string[]
}

/** The id of the choice that says whether the person sends the form or declines it. */
export const DECISION_ID = 'hark_decision'

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined)
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/** `enum` (+ `enumNames`) or `oneOf: [{ const, title }]` as choice options. */
function optionsOf(schema: FieldSchema): { label: string; value: string }[] | undefined {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : []
    return schema.enum
      .filter((v): v is string => typeof v === 'string')
      .map((v, i) => ({ label: text(names[i]) ?? v, value: v }))
  }
  if (Array.isArray(schema.oneOf)) {
    return (schema.oneOf as { const?: unknown; title?: unknown }[])
      .filter((o) => typeof o?.const === 'string')
      .map((o) => ({ label: text(o.title) ?? (o.const as string), value: o.const as string }))
  }
  return undefined
}

export function elicitationForm(schema: unknown): ElicitationForm {
  const root = (typeof schema === 'object' && schema !== null ? schema : {}) as {
    properties?: Record<string, FieldSchema>
    required?: unknown
  }
  const properties = root.properties && typeof root.properties === 'object' ? root.properties : {}
  const required = Array.isArray(root.required)
    ? root.required.filter((r): r is string => typeof r === 'string')
    : []
  const blocks: Block[] = []
  const fields: ElicitationForm['fields'] = []
  Object.entries(properties).forEach(([name, raw], i) => {
    const f = (typeof raw === 'object' && raw !== null ? raw : {}) as FieldSchema
    const id = `f${i}`
    const star = required.includes(name) ? ' (required)' : ''
    const label = `${text(f.title) ?? name}${star}`
    const base = { id, label, ...(text(f.description) ? { description: f.description } : {}) }
    const options = optionsOf(f)
    const items = (typeof f.items === 'object' && f.items !== null ? f.items : {}) as FieldSchema
    if (f.type === 'array' && optionsOf(items)?.length) {
      blocks.push({ type: 'choice', ...base, multi: true, options: optionsOf(items) })
      fields.push({ id, name, kind: 'list' })
    } else if (options?.length) {
      const def = options.find((o) => o.value === f.default)
      blocks.push({ type: 'choice', ...base, options, ...(def ? { default: def.value } : {}) })
      fields.push({ id, name, kind: 'string' })
    } else if (f.type === 'boolean') {
      blocks.push({ type: 'toggle', id, label, default: f.default === true })
      fields.push({ id, name, kind: 'boolean' })
    } else if (f.type === 'number' || f.type === 'integer') {
      const block: Block = { type: 'number_input', ...base }
      if (num(f.minimum) !== undefined) block.min = f.minimum
      if (num(f.maximum) !== undefined) block.max = f.maximum
      if (num(f.default) !== undefined) block.default = f.default
      blocks.push(block)
      fields.push({ id, name, kind: f.type })
    } else if (f.type === 'string' || f.type === undefined) {
      const block: Block = { type: 'text_input', ...base }
      if (typeof f.default === 'string') block.default = f.default
      blocks.push(block)
      fields.push({ id, name, kind: 'string' })
    }
  })
  // Declining must be possible without filling the form in, so no field is required by Hark
  // itself: a "Send" missing a required field is answered `decline` (elicitationReply).
  blocks.push({
    type: 'choice',
    id: DECISION_ID,
    label: 'Send this, or decline?',
    options: [
      { label: 'Send', value: 'accept' },
      { label: 'Decline', value: 'decline' },
    ],
    required: true,
  })
  return { blocks, fields, required }
}

export interface ElicitationReply {
  action: 'accept' | 'decline' | 'cancel'
  content?: Record<string, unknown>
}

/** The person's answer (an object keyed by input id) as the hook's reply to the MCP server. */
export function elicitationReply(form: ElicitationForm, answer: unknown): ElicitationReply {
  const given = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<
    string,
    unknown
  >
  if (given[DECISION_ID] !== 'accept') return { action: 'decline' }
  const content: Record<string, unknown> = {}
  for (const { id, name, kind } of form.fields) {
    const value = given[id]
    if (value === null || value === undefined || value === '') continue
    if (kind === 'integer' && typeof value === 'number') content[name] = Math.round(value)
    else content[name] = value
  }
  if (form.required.some((name) => !(name in content))) return { action: 'decline' }
  return { action: 'accept', content }
}
