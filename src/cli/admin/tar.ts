/**
 * A minimal streaming POSIX ustar writer and reader: regular files only, names under 100
 * bytes. Enough for backups that `tar -tf` can list and `tar -xf` can unpack by hand.
 */
import { createHash } from 'node:crypto'
import type { FileHandle } from 'node:fs/promises'

const BLOCK = 512
const CHUNK = 1024 * 1024
const OCTAL_MAX = 8 ** 11 - 1

function header(name: string, size: number, mtimeSec: number): Uint8Array {
  const h = new Uint8Array(BLOCK)
  const enc = new TextEncoder()
  const put = (offset: number, length: number, text: string) => {
    const bytes = enc.encode(text)
    if (bytes.length > length) throw new Error(`tar: "${text}" is too long`)
    h.set(bytes, offset)
  }
  const octal = (offset: number, length: number, n: number) =>
    put(offset, length, `${n.toString(8).padStart(length - 1, '0')}\0`)
  put(0, 99, name)
  octal(100, 8, 0o600)
  octal(108, 8, 0)
  octal(116, 8, 0)
  if (size <= OCTAL_MAX) octal(124, 12, size)
  else {
    // GNU base-256: the top bit of the first byte set, then the size big-endian.
    let n = BigInt(size)
    for (let i = 135; i > 124; i--) {
      h[i] = Number(n & 0xffn)
      n >>= 8n
    }
    h[124] = 0x80
  }
  octal(136, 12, mtimeSec)
  h.fill(0x20, 148, 156) // checksum field counts as spaces while summing
  h[156] = 0x30 // '0': regular file
  put(257, 6, 'ustar\0')
  put(263, 2, '00')
  put(265, 32, 'hark')
  put(297, 32, 'hark')
  const sum = h.reduce((a, b) => a + b, 0)
  put(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `)
  return h
}

export class TarWriter {
  private position = 0

  constructor(private readonly out: FileHandle) {}

  private async write(bytes: Uint8Array) {
    let done = 0
    while (done < bytes.length) {
      const { bytesWritten } = await this.out.write(bytes, done, bytes.length - done, this.position)
      done += bytesWritten
      this.position += bytesWritten
    }
  }

  private async pad(size: number) {
    const rest = size % BLOCK
    if (rest) await this.write(new Uint8Array(BLOCK - rest))
  }

  /** Adds an entry from bytes. */
  async addBytes(name: string, bytes: Uint8Array, mtimeMs = Date.now()): Promise<void> {
    await this.write(header(name, bytes.length, Math.floor(mtimeMs / 1000)))
    await this.write(bytes)
    await this.pad(bytes.length)
  }

  /**
   * Adds an entry streamed from an open file of `size` bytes; returns its SHA-256 (hex). A file
   * that turns out shorter or longer than `size` is an error (it changed under us).
   */
  async addFile(name: string, source: FileHandle, size: number, mtimeMs: number): Promise<string> {
    await this.write(header(name, size, Math.floor(mtimeMs / 1000)))
    const hash = createHash('sha256')
    const buffer = new Uint8Array(CHUNK)
    let read = 0
    while (read < size) {
      const want = Math.min(CHUNK, size - read)
      const { bytesRead } = await source.read(buffer, 0, want, read)
      if (bytesRead === 0) throw new Error(`${name} is shorter than ${size} bytes`)
      const chunk = buffer.subarray(0, bytesRead)
      hash.update(chunk)
      await this.write(chunk)
      read += bytesRead
    }
    const extra = await source.read(new Uint8Array(1), 0, 1, size)
    if (extra.bytesRead !== 0) throw new Error(`${name} is longer than ${size} bytes`)
    await this.pad(size)
    return hash.digest('hex')
  }

  /** The end-of-archive marker: two zero blocks. */
  async finish(): Promise<void> {
    await this.write(new Uint8Array(BLOCK * 2))
  }
}

export interface TarEntry {
  name: string
  size: number
}

function parseOctal(bytes: Uint8Array): number {
  if ((bytes[0] ?? 0) & 0x80) {
    let n = 0n
    for (let i = 1; i < bytes.length; i++) n = (n << 8n) | BigInt(bytes[i] ?? 0)
    return Number(n)
  }
  const text = new TextDecoder().decode(bytes).replace(/\0.*$/s, '').trim()
  if (!/^[0-7]*$/.test(text)) throw new Error('not a tar archive (bad number field)')
  return text === '' ? 0 : Number.parseInt(text, 8)
}

/**
 * Reads an archive entry by entry; `onEntry` receives each regular file's chunks in order.
 * Anything but regular files is an error: a backup never holds links or devices.
 */
export async function readTar(
  source: FileHandle,
  onEntry: (
    entry: TarEntry,
  ) => Promise<{ chunk(bytes: Uint8Array): Promise<void>; end(): Promise<void> }>,
): Promise<void> {
  let position = 0
  const block = new Uint8Array(BLOCK)
  const buffer = new Uint8Array(CHUNK)
  for (;;) {
    const { bytesRead } = await source.read(block, 0, BLOCK, position)
    if (bytesRead < BLOCK) throw new Error('the archive is truncated (no end marker)')
    position += BLOCK
    if (block.every((b) => b === 0)) return
    const stored = parseOctal(block.subarray(148, 156))
    const sum = block.reduce((a, b, i) => a + (i >= 148 && i < 156 ? 0x20 : b), 0)
    if (stored !== sum) throw new Error('not a tar archive (header checksum mismatch)')
    const dec = new TextDecoder()
    const prefix = dec.decode(block.subarray(345, 500)).replace(/\0.*$/s, '')
    const base = dec.decode(block.subarray(0, 100)).replace(/\0.*$/s, '')
    const name = prefix ? `${prefix}/${base}` : base
    const type = block[156]
    if (type !== 0x30 && type !== 0) throw new Error(`${name}: only regular files are allowed`)
    const size = parseOctal(block.subarray(124, 136))
    const sink = await onEntry({ name, size })
    let left = size
    while (left > 0) {
      const want = Math.min(CHUNK, left)
      const r = await source.read(buffer, 0, want, position)
      if (r.bytesRead === 0) throw new Error(`the archive is truncated (in ${name})`)
      await sink.chunk(buffer.subarray(0, r.bytesRead))
      position += r.bytesRead
      left -= r.bytesRead
    }
    await sink.end()
    position += (BLOCK - (size % BLOCK)) % BLOCK
  }
}
