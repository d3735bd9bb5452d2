import { type Static, Type as t } from '@sinclair/typebox'

export const FileInfo = t.Object(
  {
    file_id: t.String(),
    name: t.String(),
    mime: t.String(),
    size: t.Integer({ description: 'bytes' }),
    created_at: t.Integer(),
  },
  { $id: 'FileInfo' },
)
export type FileInfo = Static<typeof FileInfo>

export const UploadQuery = t.Object({
  name: t.Optional(t.String({ description: 'the file name shown to the person' })),
})
