import type { Database } from 'bun:sqlite'
import type { SQL } from 'bun'

/**
 * A schema read from either engine into one shape, so test/pg/schema-parity.test.ts can compare
 * SQLite's (after every migration) with Postgres' (the same version). Types stay each engine's
 * own: the test maps SQLite's to Postgres' by its documented table.
 */
export interface Column {
  name: string
  type: string
  notNull: boolean
  default: string | null
  /** Numbered by the database: SQLite's rowid alias, Postgres' identity column. */
  identity: boolean
}

export interface TableShape {
  columns: Column[]
  primaryKey: string[]
  /** "cols -> table(cols) ON DELETE action", sorted. */
  foreignKeys: string[]
  /** Column lists of UNIQUE constraints (not named indexes), sorted. */
  uniques: string[]
  /** Named indexes: "UNIQUE? (cols) WHERE?" by name. */
  indexes: Record<string, string>
}

export interface SchemaShape {
  tables: Record<string, TableShape>
  /** View name -> its column names. */
  views: Record<string, string[]>
}

const index = (unique: boolean, cols: string, partial: boolean) =>
  `${unique ? 'UNIQUE ' : ''}(${cols})${partial ? ' WHERE …' : ''}`

export function sqliteShape(db: Database): SchemaShape {
  const objects = db
    .query<{ name: string; type: string; sql: string }, []>(
      "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'",
    )
    .all()
  const shape: SchemaShape = { tables: {}, views: {} }
  for (const o of objects) {
    const info = db
      .query<
        { name: string; type: string; notnull: number; dflt_value: string | null; pk: number },
        []
      >(`PRAGMA table_info("${o.name}")`)
      .all()
    if (o.type === 'view') {
      shape.views[o.name] = info.map((c) => c.name)
      continue
    }
    const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk)
    const withoutRowid = /WITHOUT\s+ROWID/i.test(o.sql)
    // SQLite numbers a rowid table's single INTEGER PRIMARY KEY itself (it is the rowid).
    const rowidAlias = !withoutRowid && pk.length === 1 && pk[0]?.type.toUpperCase() === 'INTEGER'
    const table: TableShape = {
      columns: info.map((c) => ({
        name: c.name,
        type: c.type.toUpperCase(),
        // A primary key is never NULL on Postgres; SQLite's rowid tables would allow one in a
        // non-INTEGER key (a legacy quirk the code never relies on), so count it as NOT NULL.
        notNull: c.notnull === 1 || c.pk > 0,
        default: c.dflt_value,
        identity: rowidAlias && c.pk === 1,
      })),
      primaryKey: pk.map((c) => c.name),
      foreignKeys: [],
      uniques: [],
      indexes: {},
    }
    const fks = db
      .query<
        { id: number; seq: number; table: string; from: string; to: string; on_delete: string },
        []
      >(`PRAGMA foreign_key_list("${o.name}")`)
      .all()
    for (const id of new Set(fks.map((f) => f.id))) {
      const parts = fks.filter((f) => f.id === id).sort((a, b) => a.seq - b.seq)
      const from = parts.map((f) => f.from).join(',')
      const to = parts.map((f) => f.to).join(',')
      table.foreignKeys.push(
        `${from} -> ${parts[0]?.table}(${to}) ON DELETE ${parts[0]?.on_delete}`,
      )
    }
    table.foreignKeys.sort()
    const list = db
      .query<{ name: string; unique: number; origin: string; partial: number }, []>(
        `PRAGMA index_list("${o.name}")`,
      )
      .all()
    for (const ix of list) {
      if (ix.origin === 'pk') continue
      const cols = db
        .query<{ seqno: number; name: string }, []>(`PRAGMA index_info("${ix.name}")`)
        .all()
        .sort((a, b) => a.seqno - b.seqno)
        .map((c) => c.name)
        .join(',')
      if (ix.origin === 'u') table.uniques.push(cols)
      else table.indexes[ix.name] = index(ix.unique === 1, cols, ix.partial === 1)
    }
    table.uniques.sort()
    shape.tables[o.name] = table
  }
  return shape
}

const DELETE_ACTIONS: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
}

export async function postgresShape(sql: SQL): Promise<SchemaShape> {
  const shape: SchemaShape = { tables: {}, views: {} }
  const relations: { table_name: string; table_type: string }[] = await sql`
    SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public'`
  const columns: {
    table_name: string
    column_name: string
    udt_name: string
    is_nullable: string
    column_default: string | null
    is_identity: string
  }[] = await sql`
    SELECT table_name, column_name, udt_name, is_nullable, column_default, is_identity
    FROM information_schema.columns WHERE table_schema = 'public'
    ORDER BY table_name, ordinal_position`
  for (const r of relations) {
    const cols = columns.filter((c) => c.table_name === r.table_name)
    if (r.table_type === 'VIEW') {
      shape.views[r.table_name] = cols.map((c) => c.column_name)
      continue
    }
    shape.tables[r.table_name] = {
      columns: cols.map((c) => ({
        name: c.column_name,
        type: c.udt_name,
        notNull: c.is_nullable === 'NO',
        default: c.column_default,
        identity: c.is_identity === 'YES',
      })),
      primaryKey: [],
      foreignKeys: [],
      uniques: [],
      indexes: {},
    }
  }
  // Column names of a key or an index, in their order (pg_index.indkey, pg_constraint.conkey).
  const indexes: {
    table_name: string
    index_name: string
    is_unique: boolean
    is_primary: boolean
    partial: boolean
    constraint_type: string | null
    columns: string
  }[] = await sql`
    SELECT t.relname AS table_name, i.relname AS index_name, ix.indisunique AS is_unique,
      ix.indisprimary AS is_primary, ix.indpred IS NOT NULL AS partial,
      con.contype AS constraint_type,
      (SELECT string_agg(a.attname, ',' ORDER BY k.n)
       FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum) AS columns
    FROM pg_index ix
    JOIN pg_class t ON t.oid = ix.indrelid
    JOIN pg_class i ON i.oid = ix.indexrelid
    JOIN pg_namespace ns ON ns.oid = t.relnamespace
    LEFT JOIN pg_constraint con ON con.conindid = ix.indexrelid AND con.contype IN ('p', 'u')
    WHERE ns.nspname = 'public'`
  for (const ix of indexes) {
    const table = shape.tables[ix.table_name]
    if (!table) continue
    if (ix.is_primary) table.primaryKey = ix.columns.split(',')
    else if (ix.constraint_type === 'u') table.uniques.push(ix.columns)
    else table.indexes[ix.index_name] = index(ix.is_unique, ix.columns, ix.partial)
  }
  const fks: {
    table_name: string
    ref_table: string
    cols: string
    ref_cols: string
    on_delete: string
  }[] = await sql`
    SELECT t.relname AS table_name, r.relname AS ref_table, c.confdeltype AS on_delete,
      (SELECT string_agg(a.attname, ',' ORDER BY k.n)
       FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS cols,
      (SELECT string_agg(a.attname, ',' ORDER BY k.n)
       FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n)
       JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS ref_cols
    FROM pg_constraint c
    JOIN pg_class t ON t.oid = c.conrelid
    JOIN pg_class r ON r.oid = c.confrelid
    JOIN pg_namespace ns ON ns.oid = t.relnamespace
    WHERE c.contype = 'f' AND ns.nspname = 'public'`
  for (const fk of fks) {
    const action = DELETE_ACTIONS[fk.on_delete] ?? fk.on_delete
    shape.tables[fk.table_name]?.foreignKeys.push(
      `${fk.cols} -> ${fk.ref_table}(${fk.ref_cols}) ON DELETE ${action}`,
    )
  }
  for (const t of Object.values(shape.tables)) {
    t.foreignKeys.sort()
    t.uniques.sort()
  }
  return shape
}
