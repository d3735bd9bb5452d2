import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { API_DOC, type OpenApiSpec, renderApiDoc } from '../../scripts/api-doc.ts'
import { startTestServer, type TestServer } from '../harness.ts'

/**
 * docs/api.md, the API reference, is generated from the OpenAPI document the server serves
 * (issue 28, item 2): when a route, a field or an error changes and the file was not written
 * again (`bun scripts/api-doc.ts`), this fails, so the reference cannot drift from the code.
 */
let s: TestServer
let spec: OpenApiSpec
beforeAll(async () => {
  s = await startTestServer()
  const res = await s.raw().raw('GET', '/v1/openapi.json')
  expect(res.status).toBe(200)
  spec = (await res.json()) as OpenApiSpec
})
afterAll(() => s?.close())

describe('docs/api.md', () => {
  test('is what bun scripts/api-doc.ts writes from GET /v1/openapi.json now', () => {
    const written = readFileSync(API_DOC, 'utf8')
    if (written !== renderApiDoc(spec)) {
      throw new Error('docs/api.md is out of date with the routes: run bun scripts/api-doc.ts')
    }
  })

  test('names every operation and every schema of the document', () => {
    const doc = readFileSync(API_DOC, 'utf8')
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(doc).toContain(`\`${method.toUpperCase()} ${path}\``)
        expect(doc).toContain(`\`${op.operationId}\``)
      }
    }
    for (const name of Object.keys(spec.components.schemas)) expect(doc).toContain(`### ${name}\n`)
  })
})
