// Reads whose plans must not rest on statistics: in tables loaded and never analyzed (as with
// autovacuum off, or before it runs), a read of stored proofs by label and a page of usernames
// probe the primary key instead of scanning the table, and the driver's sessions compile no
// plan to machine code (JIT), which PostgreSQL does where it estimates a statement costly.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { POSTGRES_URL, SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';
import { SESSION_OPTIONS, sessionOptions } from '../src/postgres-database.js';
import { buildStatements } from '../src/queries.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };
const ROWS = 100_000;
let schema = '';

before(async () => {
  if (SKIP) return;
  schema = schemas.fresh('plans');
  await (await openDb(schema)).close();
  for (const table of ['vrf_proof_rows', 'value_states']) {
    await sql(`ALTER TABLE "${schema}".${table} SET (autovacuum_enabled = false)`);
  }
  await sql(
    `INSERT INTO "${schema}".vrf_proof_rows (label, seq, entries) SELECT ` +
      `convert_to('user-' || i, 'UTF8'), i, decode(repeat('ab', 300), 'hex') ` +
      `FROM generate_series(1, ${ROWS}) i`,
  );
  await sql(
    `INSERT INTO "${schema}".value_states ` +
      `(username, epoch, version, node_label_len, node_label_val, value) SELECT ` +
      `convert_to('user-' || (i / 2), 'UTF8'), i % 2 + 1, i % 2 + 1, 256, ` +
      `decode(repeat('cd', 32), 'hex'), decode('ef', 'hex') FROM generate_series(1, ${ROWS}) i`,
  );
});

/** The plan PostgreSQL picks for `text` with `values`, as JSON, on a plain session. */
async function plan(text: string, values: unknown[]): Promise<string> {
  const { rows } = await sql(`EXPLAIN (FORMAT JSON) ${text}`, values);
  return JSON.stringify(rows[0]['QUERY PLAN']);
}

const labels = Array.from({ length: 1000 }, (_, i) => Buffer.from(`user-${i * 97}`));

test('the tables have no statistics', pgTest, async () => {
  const { rows } = await sql(
    `SELECT count(*)::int AS n FROM pg_stats WHERE schemaname = $1 AND tablename = ANY($2)`,
    [schema, ['vrf_proof_rows', 'value_states']],
  );
  assert.equal(rows[0].n, 0);
});

test('a read of stored proofs probes the primary key of each label', pgTest, async () => {
  const { vrfProofRead } = buildStatements(schema);
  const shown = await plan(vrfProofRead.text, [labels, []]);
  assert.doesNotMatch(shown, /"Seq Scan"/);
  assert.match(shown, /"Relation Name":"vrf_proof_rows"/);
  // and answers as before: each label's rows, in label and seq order
  const row = `INSERT INTO "${schema}".vrf_proof_rows VALUES ($1, $2, '\\x00')`;
  for (const seq of [0, -5]) await sql(row, [labels[2], seq]);
  const asked = [labels[2], Buffer.from('nobody'), labels[1]];
  const { rows } = await sql(vrfProofRead.text, [asked, []]);
  assert.deepEqual(
    rows.map((r) => [r.src, Buffer.from(r.key).toString(), String(r.seq)]),
    [
      [1, 'user-194', '-5'],
      [1, 'user-194', '0'],
      [1, 'user-194', '194'],
      [1, 'user-97', '97'],
    ],
  );
});

test('a state with its proofs probes both primary keys, generic plan or not', pgTest, async () => {
  const { userStateProofs } = buildStatements(schema);
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { text } = userStateProofs.leqEpoch;
    await client.query(`PREPARE state_proofs (bytea, int8) AS ${text}`);
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await client.query(`SET plan_cache_mode = ${mode}`);
      const { rows } = await client.query(
        `EXPLAIN (FORMAT JSON) EXECUTE state_proofs ('\\x757365722d3937', 9)`,
      );
      const shown = JSON.stringify(rows[0]['QUERY PLAN']);
      // each table through its primary key (an index scan, or a bitmap of it for the
      // label's rows, whose count the planner guesses without statistics), never whole
      assert.doesNotMatch(shown, /"Seq Scan"/, mode);
      assert.match(shown, /"Index Name":"vrf_proof_rows_pkey"/, mode);
      assert.match(shown, /"Index Name":"value_states_pkey"/, mode);
    }
  } finally {
    await client.end();
  }
  // and answers the state first, then the label's rows in seq order
  const label = Buffer.from('user-31');
  const db = await openDb(schema, { migrate: false });
  try {
    await sql(`INSERT INTO "${schema}".vrf_proof_rows VALUES ($1, -3, '\\x00')`, [label]);
    const { rows } = await sql(userStateProofs.maxEpoch.text, [label]);
    assert.deepEqual(
      rows.map((r) => [r.src, r.epoch === null ? null : String(r.epoch), String(r.seq)]),
      [
        [0, '2', 'null'],
        [1, null, '-3'],
        [1, null, '31'],
      ],
    );
  } finally {
    await db.close();
  }
});

test('a page of usernames probes the primary key once a name', pgTest, async () => {
  const { usernamesFirst, usernamesAfter } = buildStatements(schema);
  for (const [text, values] of [
    [usernamesFirst.text, [1000]],
    [usernamesAfter.text, [Buffer.from('user-5'), 1000]],
  ] as const) {
    const shown = await plan(text, [...values]);
    assert.doesNotMatch(shown, /"Seq Scan"|"HashAggregate"/);
    assert.match(shown, /"Index Only Scan"|"Index Scan"/);
  }
  const db = await openDb(schema, { migrate: false });
  try {
    const first = await db.listUsernames(undefined, 3);
    assert.deepEqual(
      first.map((u) => Buffer.from(u).toString()),
      ['user-0', 'user-1', 'user-10'],
    );
    const next = await db.listUsernames(first[2], 2);
    assert.deepEqual(
      next.map((u) => Buffer.from(u).toString()),
      ['user-100', 'user-1000'],
    );
    const last = await db.listUsernames(Buffer.from('user-99999'), 5);
    assert.deepEqual(last, []);
  } finally {
    await db.close();
  }
});

test("the driver's sessions start without JIT; the caller's options win", pgTest, async () => {
  assert.equal(sessionOptions(undefined), SESSION_OPTIONS);
  assert.equal(sessionOptions(''), SESSION_OPTIONS);
  assert.equal(sessionOptions('-c jit=on'), `${SESSION_OPTIONS} -c jit=on`);
  const show = async (options: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, options });
    await client.connect();
    try {
      return (await client.query('SHOW jit')).rows[0].jit as string;
    } finally {
      await client.end();
    }
  };
  assert.equal(await show(sessionOptions(undefined)), 'off');
  assert.equal(await show(sessionOptions('-c jit=on')), 'on');
});
