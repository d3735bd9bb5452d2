import { Type as t } from '@sinclair/typebox'
import { BlockId, KnownBlocks } from './schema.ts'

/**
 * The documented form of a block (OpenAPI `Block`): one of the known types, each a named schema
 * (`MarkdownBlock`, `ChoiceBlock`…), or a type this server does not know, kept as given. Only
 * the document uses it: requests are checked against `AnyBlock`, then each known block against
 * its own schema (`blocks.ts`), which is what this says.
 */
const pascal = (type: string) =>
  type.replace(/(^|_)([a-z])/g, (_, __: string, letter: string) => letter.toUpperCase())

export const BlockSchemas = Object.entries(KnownBlocks).map(([type, schema]) =>
  t.Object(schema.properties, { additionalProperties: true, $id: `${pascal(type)}Block` }),
)

export const UnknownBlock = t.Object(
  { type: t.String({ minLength: 1, maxLength: 64 }), id: t.Optional(BlockId) },
  {
    additionalProperties: true,
    $id: 'UnknownBlock',
    description: 'A block of a type this server does not know: stored and sent on as given',
  },
)

export const DocumentedBlock = t.Union([...BlockSchemas, UnknownBlock], {
  $id: 'Block',
  description: 'A block: one of the known types, or another type kept as given',
})
