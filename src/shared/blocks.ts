/** The input blocks: each makes its message a question, and its answer is keyed by its id. */
export const INPUT_TYPES = new Set([
  'choice',
  'text_input',
  'number_input',
  'toggle',
  'confirm',
  'approval',
])

/** An approval's answer (PRODUCT.md "Approvals"): the person allows or denies one action. */
export interface ApprovalAnswer {
  decision: 'allow' | 'deny'
  scope?: 'once' | 'session'
  message?: string
}

export const APPROVAL_SCOPES = ['once', 'session'] as const

/** An input block: one of INPUT_TYPES, or an html block that asks (`question: true`). */
export const isInput = (block: { type: string; question?: unknown }): boolean =>
  INPUT_TYPES.has(block.type) || (block.type === 'html' && block.question === true)
