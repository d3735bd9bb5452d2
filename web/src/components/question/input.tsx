import type { FieldState } from './answers.ts'
import { ChoiceInput } from './choice.tsx'
import { ConfirmInput } from './confirm.tsx'
import type { InputProps } from './field.tsx'
import { NumberInput } from './number.tsx'
import { TextInput } from './text.tsx'
import { ToggleInput } from './toggle.tsx'

/** One input of an open question, by its kind. (An html question is its embed: index.tsx.) */
export function InputField(props: InputProps<FieldState['kind']>) {
  const { state } = props
  switch (state.kind) {
    case 'choice':
      return <ChoiceInput {...props} state={state} />
    case 'confirm':
      return <ConfirmInput {...props} state={state} />
    case 'toggle':
      return <ToggleInput {...props} state={state} />
    case 'number':
      return <NumberInput {...props} state={state} />
    case 'text':
      return <TextInput {...props} state={state} />
    case 'html':
      return null
  }
}
