import { useCallback, useEffect, useState } from 'preact/hooks'
import { errorText, get } from '../lib/api.ts'

/** A list from the server (`{ [key]: [...] }`), with reload after every change. */
export function useList<T>(path: string, key: string) {
  const [items, setItems] = useState<T[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const reload = useCallback(async () => {
    try {
      const r = await get<Record<string, T[]>>(path)
      setItems(r[key] ?? [])
      setError(null)
    } catch (e) {
      setError(errorText(e))
    }
  }, [path, key])
  useEffect(() => {
    void reload()
  }, [reload])
  return { items, error, reload }
}
