import { controlProps, type InputProps, TypedField } from './field.tsx'

/** A line of text, or a box of lines when the block is `multiline`. */
export function TextInput({ block, state, error, onChange }: InputProps<'text'>) {
  const placeholder = typeof block.placeholder === 'string' ? block.placeholder : undefined
  const onInput = (e: { currentTarget: { value: string } }) =>
    onChange({ kind: 'text', text: e.currentTarget.value })
  return (
    <TypedField block={block} error={error} fallbackLabel="Answer">
      {block.multiline === true ? (
        <textarea
          {...controlProps(block, error)}
          rows={4}
          placeholder={placeholder}
          value={state.text}
          onInput={onInput}
        />
      ) : (
        <input
          {...controlProps(block, error)}
          type="text"
          placeholder={placeholder}
          value={state.text}
          onInput={onInput}
        />
      )}
    </TypedField>
  )
}
