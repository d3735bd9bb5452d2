-- Hark schema, version 12: full-text search over the person's messages (issue 18).
--
-- What a message is found by is said once, in SQL: the view `message_search_text` takes a
-- live message's human-readable text from its JSON body (and answer), and both the backfill
-- below and the triggers that keep the index current read it. Triggers, not the message store,
-- because every write of a message then updates the index whatever path it took: sends, edits,
-- pins, answers, expiry, secret requests, deletes, and the rows that go with a deleted channel
-- or person (ON DELETE CASCADE fires the delete trigger); nothing can forget to, and the
-- backfill and the live index cannot drift apart.
--
-- `title`: the body's title; `body`: the rest. The body's text, and of its blocks the fields a
-- person reads (markdown and heading text, code, labels, names, alt text, summaries,
-- descriptions, placeholders, keyvalue keys and values, table columns and cells, choice
-- options, an approval's tool and command), then the person's answer (its strings; an
-- approval's decision and scope words are left out). Never indexed: ids, URLs, file ids, raw
-- html, secret fingerprints. Deleted messages (body NULL) have no row.
--
-- The FTS table keeps its own copy of the text (not external content): snippet() reads it, and
-- a row is replaced by rowid without having to give the old text back exactly.
-- Tokenizer: unicode61 with remove_diacritics 2 (word search: "deploy" finds "Déploy", prefix
-- queries "dep"* use the index). Not trigram: three times the index, nothing found for a term
-- shorter than three characters, and substring hits ("cat" in "concatenate") rank as well as
-- words. char(2) and char(3) are taken out of the text: they are snippet()'s match markers.
CREATE VIEW message_search_text AS
SELECT m.rid AS rid,
  replace(replace(coalesce(json_extract(m.body, '$.title'), ''), char(2), ' '), char(3), ' ')
    AS title,
  replace(replace(coalesce((
    SELECT group_concat(j.value, char(10)) FROM json_tree(m.body) j
    WHERE j.type = 'text' AND j.fullkey <> '$.title' AND j.path NOT GLOB '$.blocks[[]*].html'
      AND (j.key IN ('text', 'code', 'label', 'name', 'alt', 'summary', 'description',
                     'placeholder', 'tool', 'key', 'value', 'command')
           OR j.path GLOB '$.blocks[[]*].columns'
           OR j.path GLOB '$.blocks[[]*].rows[[]*]')
  ), '') || coalesce(char(10) || (
    SELECT group_concat(a.value, char(10)) FROM json_tree(CASE WHEN json_valid(m.answer) THEN m.answer END) a
    WHERE a.type = 'text' AND (a.key IS NULL OR a.key NOT IN ('decision', 'scope'))
  ), ''), char(2), ' '), char(3), ' ') AS body
FROM messages m
WHERE m.body IS NOT NULL AND m.deleted_at IS NULL AND json_valid(m.body);

CREATE VIRTUAL TABLE message_fts USING fts5(
  title, body,
  tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO message_fts (rowid, title, body) SELECT rid, title, body FROM message_search_text;

CREATE TRIGGER message_fts_insert AFTER INSERT ON messages WHEN NEW.body IS NOT NULL
BEGIN
  INSERT INTO message_fts (rowid, title, body)
    SELECT rid, title, body FROM message_search_text WHERE rid = NEW.rid;
END;

-- Only writes that change what is indexed: a state change or a read mark does not re-index.
CREATE TRIGGER message_fts_update AFTER UPDATE OF body, answer, deleted_at ON messages
BEGIN
  DELETE FROM message_fts WHERE rowid = OLD.rid;
  INSERT INTO message_fts (rowid, title, body)
    SELECT rid, title, body FROM message_search_text WHERE rid = NEW.rid;
END;

CREATE TRIGGER message_fts_delete AFTER DELETE ON messages
BEGIN
  DELETE FROM message_fts WHERE rowid = OLD.rid;
END;
