import { useEffect, useState } from 'preact/hooks'

/**
 * A module-level value as component state: `watchers` is the set the module calls on each
 * change. The value is read again once subscribed, as it may have changed between the render
 * and the effect.
 */
export function useWatched<T>(watchers: Set<(value: T) => void>, current: () => T): T {
  const [value, setValue] = useState(current)
  useEffect(() => {
    watchers.add(setValue)
    setValue(current())
    return () => {
      watchers.delete(setValue)
    }
  }, [])
  return value
}
