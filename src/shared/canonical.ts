/**
 * Canonical JSON: object keys sorted (by UTF-16 code units, as `Array.prototype.sort` does), no
 * spaces, everything else as `JSON.stringify` writes it. The server, the agent and the app hash
 * the same value to the same bytes with it: an approval's `request_hash` and, later, the
 * challenge a signed answer covers. `undefined` members are left out, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value)
    // JSON has no undefined, functions or symbols; a caller hashing one is a bug, not data.
    if (text === undefined) throw new TypeError('canonicalJson: not a JSON value')
    return text
  }
  if (Array.isArray(value)) {
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`
  }
  const record = value as Record<string, unknown>
  const members = Object.keys(record)
    .sort()
    .filter((k) => record[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`)
  return `{${members.join(',')}}`
}

/** What an approval's `request_hash` covers: the tool and its input, nothing else. */
export const approvalRequest = (tool: string, input: unknown) => canonicalJson({ tool, input })

/** What the `request_hash` of another question asked with proof covers: its inputs, as sent. */
export const questionRequest = (inputs: readonly unknown[]) => canonicalJson({ inputs })

/**
 * What the `request_hash` of a secret request covers (its signed answer binds it): the name the
 * agent asked for and the public key it made for this one request.
 */
export const secretRequest = (name: string, publicKey: string) =>
  canonicalJson({ secret: { name: name.trim(), public_key: publicKey } })
