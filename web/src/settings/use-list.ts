import { useCallback, useEffect, useState } from 'preact/hooks'
import { errorText } from '../lib/api.ts'

/**
 * A list from the server (one of the client's list calls, a module function so it stays the
 * same across renders), with reload after every change.
 */
export function useList<T>(load: () => Promise<T[]>) {
  const [items, setItems] = useState<T[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const reload = useCallback(async () => {
    try {
      setItems(await load())
      setError(null)
    } catch (e) {
      setError(errorText(e))
    }
  }, [load])
  useEffect(() => {
    void reload()
  }, [reload])
  return { items, error, reload }
}
