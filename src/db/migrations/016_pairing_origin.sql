-- Hark schema, version 16: where a pending pairing comes from (issue 28), shown to the person
-- who approves it. `host`: the machine's name as `hark init` sends it, a claim (anyone may start
-- a pairing and name any host); `address`: the client address the server saw (after
-- --trust-proxy). Both null for pairings started before this version or by clients that send
-- no host.
ALTER TABLE pairings ADD COLUMN host TEXT;
ALTER TABLE pairings ADD COLUMN address TEXT;
