import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { type Static, Type as t } from '@sinclair/typebox'
import { API_TYPES, renderApiTypes } from '../../scripts/api-types.ts'
import type { Passkey } from '../../src/access/passkeys/schema.ts'
import type { FileInfo } from '../../src/files/schema.ts'
import type { SecretRequest } from '../../src/messages/asks/secrets/schema.ts'
import type { ChannelSummary } from '../../src/messages/channel-list/schema.ts'
import type {
  AskInfo,
  Block,
  DeletedMessage,
  FeedResponse,
  Message,
  MessageBody,
} from '../../src/messages/schema.ts'
import type { SearchResponse, SearchResult } from '../../src/messages/search/schema.ts'
import type { SignedInUser } from '../../src/people/schema.ts'
import type { PushDevice } from '../../src/push/schema.ts'
import type * as Printed from '../../src/shared/api-types.gen.ts'

/**
 * The web app's record types (src/shared/api-types.gen.ts) are printed from the server's TypeBox
 * schemas, so that src/shared/ imports nothing of the server (issue 30) and the app's types still
 * cannot drift from the server's: this fails when the file is not what the schemas print now
 * (`bun scripts/api-doc.ts` writes it again), and when the printer says a type wrongly.
 */
describe('src/shared/api-types.gen.ts', () => {
  test('is what bun scripts/api-doc.ts prints from the schemas now', () => {
    const written = readFileSync(API_TYPES, 'utf8')
    if (written !== renderApiTypes()) {
      throw new Error(
        'src/shared/api-types.gen.ts is out of date with the schemas: run bun scripts/api-doc.ts',
      )
    }
  })

  test('imports nothing: src/shared/ stays below every area', () => {
    const written = readFileSync(API_TYPES, 'utf8')
    expect(written).not.toMatch(/^\s*(import|export [^\n]* from)\b/m)
    expect(written).toContain('export interface Message {')
  })
})

/**
 * Each printed record is the server's own type, both ways round (the server's records are what
 * TypeBox's `Static` makes of the same schemas, except where the server writes a block out as
 * open). Checked by `tsc --noEmit -p .` (`npm test` runs it): a wrong print fails the typecheck.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const SAME: [
  Same<Printed.AskInfo, AskInfo>,
  Same<Printed.Block, Block>,
  Same<Printed.ChannelSummary, ChannelSummary>,
  Same<Printed.DeletedMessage, DeletedMessage>,
  Same<Printed.FeedResponse, FeedResponse>,
  Same<Printed.FileInfo, FileInfo>,
  Same<Printed.Message, Message>,
  Same<Printed.MessageBody, MessageBody>,
  Same<Printed.Passkey, Passkey>,
  Same<Printed.PushDevice, PushDevice>,
  Same<Printed.SearchResponse, SearchResponse>,
  Same<Printed.SearchResult, SearchResult>,
  Same<Printed.SecretRequest, Static<typeof SecretRequest>>,
  Same<Printed.SignedInUser, SignedInUser>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true]

describe('scripts/api-types.ts prints a schema', () => {
  test('every printed record is the server type (the typecheck holds SAME)', () => {
    expect(SAME).toHaveLength(14)
  })

  test('objects, optional and open fields, arrays, unions, literals, enums, records, names', () => {
    const Inner = t.Object({ a: t.String() }, { $id: 'Inner', description: 'a named one' })
    const Sample = t.Object(
      {
        text: t.String({ description: 'said above the field' }),
        count: t.Optional(t.Integer()),
        kind: t.Literal('x'),
        mixed: t.Union([t.Literal('a'), t.Literal(1), t.Null()]),
        list: t.Array(t.Union([t.String(), t.Number()])),
        flags: t.Record(t.String(), t.Boolean()),
        inner: Inner,
        inners: t.Array(Inner),
        nested: t.Object({ on: t.Boolean() }),
        any: t.Unknown(),
        mode: t.Enum({ A: 'a', B: 'b' }),
        'odd-name': t.Optional(t.Union([t.String(), t.Null()])),
      },
      { $id: 'Sample', additionalProperties: true },
    )
    const printed = renderApiTypes([Sample])
    expect(printed).toContain(
      [
        '/** a named one */',
        'export interface Inner {',
        '  a: string',
        '}',
        '',
        'export interface Sample {',
        '  /** said above the field */',
        '  text: string',
        '  count?: number',
        "  kind: 'x'",
        "  mixed: 'a' | 1 | null",
        '  list: (string | number)[]',
        '  flags: Record<string, boolean>',
        '  inner: Inner',
        '  inners: Inner[]',
        '  nested: {',
        '    on: boolean',
        '  }',
        '  any: unknown',
        "  mode: 'a' | 'b'",
        "  'odd-name'?: string | null",
        '  [key: string]: unknown',
        '}',
        '',
      ].join('\n'),
    )
  })

  test('a union too long for a line goes one member a line', () => {
    const many = Array.from({ length: 12 }, (_, i) => t.Literal(`status_number_${i}`))
    const printed = renderApiTypes([t.Union(many, { $id: 'Long' })])
    expect(printed).toContain("export type Long =\n  | 'status_number_0'\n  | 'status_number_1'\n")
  })

  test('what it cannot say fails, naming where: never a silent unknown', () => {
    const withTuple = t.Object({ pair: t.Tuple([t.String(), t.Number()]) }, { $id: 'Pairs' })
    expect(() => renderApiTypes([withTuple])).toThrow('Pairs.pair')
    const withRef = t.Object({ other: t.Ref('Elsewhere') }, { $id: 'Refs' })
    expect(() => renderApiTypes([withRef])).toThrow('Refs.other: cannot print a schema with "$ref"')
    const withNot = t.Object({ no: t.Not(t.String()) }, { $id: 'Nots' })
    expect(() => renderApiTypes([withNot])).toThrow('Nots.no')
  })

  test('two different schemas of one name, or a record without a name, fail', () => {
    const a = t.Object({ x: t.String() }, { $id: 'Twice' })
    const b = t.Object({ y: t.String() }, { $id: 'Twice' })
    expect(() => renderApiTypes([t.Object({ a, b }, { $id: 'Both' })])).toThrow(
      'two different schemas are named "Twice"',
    )
    expect(() => renderApiTypes([t.Object({ x: t.String() })])).toThrow('a record without an $id')
  })
})
