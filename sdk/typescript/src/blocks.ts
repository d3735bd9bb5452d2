import type {
  ApprovalBlock,
  ChoiceBlock,
  ChoiceOption,
  CodeBlock,
  ConfirmBlock,
  NumberInputBlock,
  ProgressBlock,
  TextInputBlock,
  ToggleBlock,
} from './types.ts'

/**
 * Small constructors for the common blocks; a literal object typed as a `Block` works as well.
 * Each keeps its literal types, so `askAndWait` can type the answer.
 */
type Extra<B, K extends keyof B> = Omit<B, 'type' | 'id' | K>

export const confirm = <const Id extends string>(
  id: Id,
  label: string,
  extra: Extra<ConfirmBlock, 'label'> = {},
) => ({ type: 'confirm', id, label, ...extra }) as const satisfies ConfirmBlock

/** Options as labels (`['yes', 'no']`) or full options; pass `{ multi: true }` for an array. */
export const choice = <const Id extends string, const X extends Extra<ChoiceBlock, 'options'>>(
  id: Id,
  options: (string | ChoiceOption)[],
  extra?: X,
) =>
  ({
    type: 'choice',
    id,
    options: options.map((o) => (typeof o === 'string' ? { label: o } : o)),
    ...(extra as X),
  }) as const satisfies ChoiceBlock

export const textInput = <const Id extends string>(
  id: Id,
  label?: string,
  extra: Extra<TextInputBlock, 'label'> = {},
) => ({ type: 'text_input', id, ...(label === undefined ? {} : { label }), ...extra }) as const

export const numberInput = <const Id extends string>(
  id: Id,
  label?: string,
  extra: Extra<NumberInputBlock, 'label'> = {},
) => ({ type: 'number_input', id, ...(label === undefined ? {} : { label }), ...extra }) as const

export const toggle = <const Id extends string>(
  id: Id,
  label: string,
  extra: Extra<ToggleBlock, 'label'> = {},
) => ({ type: 'toggle', id, label, ...extra }) as const satisfies ToggleBlock

export const approval = <const Id extends string>(
  id: Id,
  tool: string,
  input: unknown,
  extra: Extra<ApprovalBlock, 'tool' | 'input'> = {},
) => ({ type: 'approval', id, tool, input, ...extra }) as const satisfies ApprovalBlock

export const markdown = (text: string) => ({ type: 'markdown', text }) as const
export const code = (source: string, language?: string): CodeBlock =>
  language === undefined ? { type: 'code', code: source } : { type: 'code', code: source, language }
export const progress = (
  value: number,
  max?: number,
  label?: string,
  id?: string,
): ProgressBlock => ({
  type: 'progress',
  value,
  ...(max === undefined ? {} : { max }),
  ...(label === undefined ? {} : { label }),
  ...(id === undefined ? {} : { id }),
})
