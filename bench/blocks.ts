/**
 * What checking a send's blocks costs (`validateBody`, src/messages/blocks.ts), against the way
 * it was done before each block's schema was compiled: TypeBox walking the schema for its first
 * error on every block (`Value.Errors(...).First()`), valid or not.
 *
 *   bun bench/blocks.ts [--runs 20000]
 *
 * Prints µs per message for three bodies: the benches' status message (one progress block), a
 * question (markdown, choice, text input), and a 200-row table; beside it, the schema walk
 * alone, which `validateBody` did on every block before (on top of its other checks).
 */
import { Value } from '@sinclair/typebox/value'
import { validateBody } from '../src/messages/blocks.ts'
import { KnownBlocks, type KnownBlockType, type MessageBody } from '../src/messages/schema.ts'
import { arg } from './lib.ts'

const RUNS = arg('runs', 20_000)

const bodies: Record<string, MessageBody> = {
  'status (1 progress block)': {
    title: 'Build #42',
    blocks: [{ type: 'progress', value: 3, max: 10 }],
  },
  'question (markdown, choice, text input)': {
    blocks: [
      { type: 'markdown', text: 'Deploy **api** to production?' },
      {
        type: 'choice',
        id: 'env',
        options: [
          { value: 'prod', label: 'Production' },
          { value: 'staging', label: 'Staging' },
        ],
      },
      { type: 'text_input', id: 'why', label: 'Why?' },
    ],
  } as MessageBody,
  'table (200 rows of 4)': {
    blocks: [
      {
        type: 'table',
        columns: ['test', 'ms', 'status', 'owner'],
        rows: Array.from({ length: 200 }, (_, i) => [`test ${i}`, i * 3, 'passed', 'ci']),
      },
    ],
  } as MessageBody,
}

const rules = { field: 'body.blocks', inputs: 'allowed', fileInChannel: () => true }

/** The check as it was: the schema walked for its first error, on every block. */
function walked(body: MessageBody): void {
  for (const block of body.blocks ?? []) {
    const type = (block as { type: string }).type as KnownBlockType
    if (Value.Errors(KnownBlocks[type], block).First()) throw new Error(`invalid ${type}`)
  }
}

const time = (fn: () => void): number => {
  for (let i = 0; i < Math.min(RUNS, 1000); i++) fn() // warm-up (and the first compile)
  const started = performance.now()
  for (let i = 0; i < RUNS; i++) fn()
  return ((performance.now() - started) * 1000) / RUNS
}

console.log(`µs per message, ${RUNS} runs each`)
console.log(`${'body'.padEnd(42)} ${'validateBody'.padStart(13)} ${'the walk alone'.padStart(15)}`)
for (const [name, body] of Object.entries(bodies)) {
  validateBody(body, rules) // valid as written, or this throws
  const now = time(() => validateBody(body, rules))
  const before = time(() => {
    walked(body)
  })
  console.log(`${name.padEnd(42)} ${now.toFixed(2).padStart(13)} ${before.toFixed(2).padStart(15)}`)
}
