-- Hark schema, version 8: approvals (PRODUCT.md "Approvals").
-- `ask_request_hash`: for a question whose input is an `approval` block, SHA-256 (hex) of the
-- canonical JSON of `{ tool, input }`, fixed when the question is asked (an approval's action
-- never changes afterwards), so an answer can be bound to the exact action it allowed.
-- `ask_reason`: why a question was withdrawn (cancelled), e.g. "answered in the terminal" when
-- a coding agent's own prompt decided first; shown by the app instead of a bare "cancelled".
ALTER TABLE messages ADD COLUMN ask_request_hash TEXT;
ALTER TABLE messages ADD COLUMN ask_reason TEXT;
