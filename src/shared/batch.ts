import { canonicalJson } from './canonical.ts'

/**
 * Batch answers (issue 29 item 5): several questions answered with one passkey gesture. Each
 * question keeps its own claim (src/shared/proof.ts `claimText`, every item dated with the
 * batch's one `answered_at`); the assertion's challenge is SHA-256 of the canonical JSON of
 * `{type: "hark.batch", items}`, `items` being the SHA-256 (hex) of each item's claim text in
 * the order the app listed them. An agent holding its own claim and the list can check its own
 * item: its claim's hash must be in the list exactly once, and the assertion must be over that
 * list. Nothing else of the siblings is revealed to it (only their hashes), and a list with an
 * item left out, added, swapped or moved no longer matches the signature.
 */
export const BATCH_TYPE = 'hark.batch'

/** Most questions one gesture answers: the list the person reviews must fit their attention. */
export const BATCH_MAX = 50

/** What a batch-signed answer carries beside the assertion: every item's claim hash, in order. */
export interface BatchItems {
  items: string[]
}

/** The text whose SHA-256 is the batch assertion's challenge. */
export const batchText = (items: readonly string[]) =>
  canonicalJson({ type: BATCH_TYPE, items: [...items] })

/** A claim hash as the list holds it: 64 lowercase hex digits. */
export const isItemHash = (value: unknown): value is string =>
  typeof value === 'string' && /^[0-9a-f]{64}$/.test(value)
