/**
 * Prints src/shared/api-types.gen.ts: the wire records the web app reads, as plain TypeScript
 * printed from the server's own TypeBox schemas, with no import. The app may import only
 * src/shared/ (biome.json), and src/shared/ imports nothing of the server: a type-only import of
 * the domains' schemas made shared sit above every domain, in a circle through the whole tree.
 * Printed instead, the types still cannot drift: `bun scripts/api-doc.ts` writes this file with
 * docs/api.md (`--check` checks both), and test/api/api-types.test.ts fails when the file is not
 * what the schemas print now, so a changed schema is a changed type the app's build then checks.
 *
 * What it prints (a TypeBox schema is a JSON Schema object): objects (optional fields with `?`,
 * open ones with an index signature, records), arrays, unions, literals, enums, nullables, and
 * a schema with an `$id` by that name, printed once. Anything else throws, naming where it is:
 * a construct it cannot say is a failure, never a silent `unknown`.
 */
import { join } from 'node:path'
import type { TSchema } from '@sinclair/typebox'
import { Passkey } from '../src/access/passkeys/schema.ts'
import { FileInfo } from '../src/files/schema.ts'
import { SecretRequest } from '../src/messages/asks/secrets/schema.ts'
import { ChannelSummary } from '../src/messages/channel-list/schema.ts'
import {
  AnyBlock,
  AskInfo,
  DeletedMessage,
  FeedResponse,
  Message,
  MessageBody,
} from '../src/messages/schema.ts'
import { SearchResponse, SearchResult } from '../src/messages/search/schema.ts'
import { SignedInUser } from '../src/people/schema.ts'
import { PushDevice } from '../src/push/schema.ts'

export const API_TYPES = join(import.meta.dir, '..', 'src', 'shared', 'api-types.gen.ts')

/** The records the app reads; the named schemas they hold are printed with them. */
export const APP_RECORDS: readonly TSchema[] = [
  AnyBlock,
  AskInfo,
  ChannelSummary,
  DeletedMessage,
  FeedResponse,
  FileInfo,
  Message,
  MessageBody,
  Passkey,
  PushDevice,
  SearchResponse,
  SearchResult,
  SecretRequest,
  SignedInUser,
]

/** The JSON Schema keywords a schema is read by; the others (sizes, patterns) say no type. */
interface Schema {
  $id?: string
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  patternProperties?: Record<string, Schema>
  items?: Schema | Schema[]
  anyOf?: Schema[]
  allOf?: Schema[]
  const?: unknown
  enum?: unknown[]
  description?: string
}

/** Keywords that change the type but are not printed: met, they fail the print. */
const UNSAID = ['$ref', 'oneOf', 'not', 'if', 'prefixItems', 'dependentSchemas'] as const
const SCALARS: Record<string, string> = {
  string: 'string',
  number: 'number',
  integer: 'number',
  boolean: 'boolean',
  null: 'null',
}
const WIDTH = 100
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** A string or other literal as the house writes it (single quotes). */
const literal = (value: unknown): string =>
  typeof value === 'string'
    ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`
    : JSON.stringify(value)

const key = (name: string) => (IDENTIFIER.test(name) ? name : literal(name))

/** A doc comment at `indent`, on one line when it fits, else wrapped. */
function comment(text: string | undefined, indent: string): string[] {
  if (!text) return []
  const clean = text.replace(/\*\//g, '* /').replace(/\s+/g, ' ').trim()
  if (indent.length + clean.length + 7 <= WIDTH) return [`${indent}/** ${clean} */`]
  const lines: string[] = []
  let line = ''
  for (const word of clean.split(' ')) {
    if (line && indent.length + 3 + line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push(line)
  return [`${indent}/**`, ...lines.map((l) => `${indent} * ${l}`), `${indent} */`]
}

class Printer {
  /** Named schemas by name, in the order met; each printed once. */
  readonly named = new Map<string, Schema>()

  /** `schema` as a type; `at` names where it is for a failure; `indent` for nested objects. */
  type(schema: Schema, at: string, indent: string, root = false): string {
    if (!root && schema.$id !== undefined) return this.name(schema, at)
    for (const word of UNSAID) {
      if (word in schema) throw new Error(`${at}: cannot print a schema with "${word}"`)
    }
    if (schema.const !== undefined) return literal(schema.const)
    if (schema.enum) return schema.enum.map(literal).join(' | ')
    if (schema.anyOf) return this.union(schema.anyOf, at, indent, ' | ')
    if (schema.allOf) return this.union(schema.allOf, at, indent, ' & ')
    const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []
    if (types.length > 1) {
      return types.map((type) => this.type({ ...schema, type }, at, indent)).join(' | ')
    }
    const [type] = types
    if (type === undefined && !schema.properties) {
      if (Object.keys(schema).every((k) => k === 'description')) return 'unknown'
      throw new Error(`${at}: a schema without a type: ${JSON.stringify(schema)}`)
    }
    if (type === 'array') {
      if (!schema.items || Array.isArray(schema.items)) {
        throw new Error(`${at}: an array without one items schema`)
      }
      const item = this.type(schema.items, `${at}[]`, indent)
      return /[|&]/.test(item) && !item.startsWith('{') ? `(${item})[]` : `${item}[]`
    }
    if (type === 'object' || schema.properties) return this.object(schema, at, indent)
    const scalar = SCALARS[type as string]
    if (!scalar) throw new Error(`${at}: unknown type "${type}"`)
    return scalar
  }

  private union(parts: Schema[], at: string, indent: string, glue: string): string {
    return parts.map((part, i) => this.type(part, `${at}|${i}`, indent)).join(glue)
  }

  private name(schema: Schema, at: string): string {
    const name = schema.$id as string
    const known = this.named.get(name)
    if (known === undefined) this.named.set(name, schema)
    else if (JSON.stringify(known) !== JSON.stringify(schema)) {
      throw new Error(`${at}: two different schemas are named "${name}"`)
    }
    return name
  }

  /** An object: its fields one a line, then what it takes beyond them. */
  private object(schema: Schema, at: string, indent: string): string {
    const inner = `${indent}  `
    const required = new Set(schema.required ?? [])
    const lines: string[] = []
    for (const [field, value] of Object.entries(schema.properties ?? {})) {
      // A named schema's description is said once, above its declaration.
      if (value.$id === undefined) lines.push(...comment(value.description, inner))
      const optional = required.has(field) ? '' : '?'
      lines.push(this.member(`${inner}${key(field)}${optional}: `, value, `${at}.${field}`, inner))
    }
    const patterns = Object.entries(schema.patternProperties ?? {})
    const extra = schema.additionalProperties
    if (patterns.length > 1) throw new Error(`${at}: more than one patternProperties`)
    const [pattern] = patterns
    let rest: string | undefined
    if (pattern) rest = this.type(pattern[1], `${at}[${pattern[0]}]`, inner)
    else if (extra === true) rest = 'unknown'
    else if (typeof extra === 'object') rest = this.type(extra, `${at}[*]`, inner)
    if (lines.length === 0)
      return rest === undefined ? 'Record<string, never>' : `Record<string, ${rest}>`
    if (rest !== undefined) lines.push(`${inner}[key: string]: ${rest}`)
    return `{\n${lines.join('\n')}\n${indent}}`
  }

  /** `head` and the type; a union too long for the line goes one member a line. */
  private member(head: string, value: Schema, at: string, indent: string): string {
    return fit(head, this.type(value, at, indent), indent)
  }

  /** A named schema as its declaration. */
  declaration(name: string, schema: Schema): string[] {
    const type = this.type(schema, name, '', true)
    const head = comment(schema.description, '')
    if (type.startsWith('{\n')) return [...head, `export interface ${name} ${type}`]
    return [...head, fit(`export type ${name} = `, type, '')]
  }
}

/** `head` then `type`: a one-line union too long for the line goes one member a line. */
function fit(head: string, type: string, indent: string): string {
  if (head.length + type.length <= WIDTH || type.includes('\n') || !type.includes(' | ')) {
    return `${head}${type}`
  }
  const parts = type.split(' | ').map((part) => `${indent}  | ${part}`)
  return `${head.trimEnd()}\n${parts.join('\n')}`
}

/** The file: every record of `roots` and every named schema they hold, by name. */
export function renderApiTypes(roots: readonly TSchema[] = APP_RECORDS): string {
  const printer = new Printer()
  for (const root of roots) {
    const schema = root as Schema
    if (typeof schema.$id !== 'string') {
      throw new Error(`a record without an $id: ${JSON.stringify(schema).slice(0, 80)}`)
    }
    printer.type(schema, schema.$id, '')
  }
  // Reading a named schema may meet more names: read on until none is new, then print by name.
  const read = new Set<string>()
  for (let fresh = [...printer.named.keys()]; fresh.length > 0; ) {
    for (const name of fresh) {
      printer.declaration(name, printer.named.get(name) as Schema)
      read.add(name)
    }
    fresh = [...printer.named.keys()].filter((name) => !read.has(name))
  }
  const names = [...printer.named.keys()].sort()
  const declarations = names.flatMap((name) => [
    ...printer.declaration(name, printer.named.get(name) as Schema),
    '',
  ])
  return [
    '/**',
    " * The wire records the web app reads, printed from the server's TypeBox schemas by",
    ' * scripts/api-types.ts (run `bun scripts/api-doc.ts`); do not edit by hand:',
    ' * test/api/api-types.test.ts fails when this differs from what the schemas print now.',
    ' * Plain types, no import: src/shared/ imports nothing of the server.',
    ' */',
    '',
    ...declarations,
  ].join('\n')
}
