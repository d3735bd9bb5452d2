/**
 * The app's icons, drawn in code at build time so that no binary image lives in the repository:
 * a white speech bubble with three dots on the brand colour. `any` icons have rounded corners;
 * `maskable` ones fill the square (the launcher cuts its own shape) and keep the bubble inside
 * the safe zone.
 */
import { deflateSync } from 'node:zlib'

type Rgba = [number, number, number, number]

const BRAND: Rgba = [67, 56, 202, 255]
const WHITE: Rgba = [255, 255, 255, 255]
const CLEAR: Rgba = [0, 0, 0, 0]

/** Distance-style test for a rounded rectangle centred at (cx, cy). */
function inRoundedRect(
  x: number,
  y: number,
  cx: number,
  cy: number,
  w: number,
  h: number,
  r: number,
) {
  const dx = Math.max(Math.abs(x - cx) - (w / 2 - r), 0)
  const dy = Math.max(Math.abs(y - cy) - (h / 2 - r), 0)
  return dx * dx + dy * dy <= r * r
}

function inTriangle(x: number, y: number, a: number[], b: number[], c: number[]) {
  const side = (p: number[], q: number[]) =>
    (x - (q[0] as number)) * ((p[1] as number) - (q[1] as number)) -
    ((p[0] as number) - (q[0] as number)) * (y - (q[1] as number))
  const d1 = side(a, b)
  const d2 = side(b, c)
  const d3 = side(c, a)
  return !((d1 < 0 || d2 < 0 || d3 < 0) && (d1 > 0 || d2 > 0 || d3 > 0))
}

/** The colour at a point of the unit square; `scale` shrinks the bubble for maskable icons. */
function colourAt(x: number, y: number, maskable: boolean): Rgba {
  if (!maskable && !inRoundedRect(x, y, 0.5, 0.5, 1, 1, 0.22)) return CLEAR
  const s = maskable ? 0.8 : 1
  const u = 0.5 + (x - 0.5) / s
  const v = 0.5 + (y - 0.5) / s
  const bubble =
    inRoundedRect(u, v, 0.5, 0.45, 0.6, 0.44, 0.13) ||
    inTriangle(u, v, [0.3, 0.6], [0.46, 0.6], [0.27, 0.78])
  if (!bubble) return BRAND
  for (const dot of [0.36, 0.5, 0.64]) {
    if ((u - dot) ** 2 + (v - 0.45) ** 2 <= 0.048 ** 2) return BRAND
  }
  return WHITE
}

/** RGBA pixels, each averaged over 4×4 samples so the edges are smooth. */
function draw(size: number, maskable: boolean): Uint8Array {
  const pixels = new Uint8Array(size * size * 4)
  const n = 4
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const sum = [0, 0, 0, 0]
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const c = colourAt((px + (sx + 0.5) / n) / size, (py + (sy + 0.5) / n) / size, maskable)
          // Premultiplied, so transparent samples do not darken the edge.
          for (let i = 0; i < 3; i++) sum[i] = (sum[i] as number) + (c[i] as number) * (c[3] / 255)
          sum[3] = (sum[3] as number) + c[3]
        }
      }
      const alpha = (sum[3] as number) / (n * n)
      const o = (py * size + px) * 4
      for (let i = 0; i < 3; i++) {
        pixels[o + i] = alpha === 0 ? 0 : Math.round((sum[i] as number) / (n * n) / (alpha / 255))
      }
      pixels[o + 3] = Math.round(alpha)
    }
  }
  return pixels
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  out.set(new TextEncoder().encode(type), 4)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)))
  return out
}

/** A minimal PNG: 8-bit RGBA, no interlace, filter 0 on every row. */
export function encodePng(size: number, pixels: Uint8Array): Uint8Array<ArrayBuffer> {
  const header = new Uint8Array(13)
  const view = new DataView(header.buffer)
  view.setUint32(0, size)
  view.setUint32(4, size)
  header.set([8, 6, 0, 0, 0], 8)
  const raw = new Uint8Array(size * (size * 4 + 1))
  for (let y = 0; y < size; y++) {
    raw.set(pixels.subarray(y * size * 4, (y + 1) * size * 4), y * (size * 4 + 1) + 1)
  }
  const parts = [
    new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', new Uint8Array()),
  ]
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** Every icon the app and its manifest name, by file name. */
export const ICONS = [
  { name: 'icon-192.png', size: 192, maskable: false },
  { name: 'icon-512.png', size: 512, maskable: false },
  { name: 'icon-maskable-512.png', size: 512, maskable: true },
  { name: 'apple-touch-icon.png', size: 180, maskable: true },
  { name: 'favicon-32.png', size: 32, maskable: false },
] as const

export const iconPng = (size: number, maskable: boolean) => encodePng(size, draw(size, maskable))

export const THEME_COLOUR = '#4338ca'
