// Drives a running ddp-proxy (the demo) with the Knex query builder, as a
// Node.js service or semantic layer would: filtered and grouped aggregates
// built with knex, over node's pg driver (the PostgreSQL front end, bound
// parameters through the extended protocol) and mysql2 (the MySQL front
// end). Prints one line per check; exits non-zero on the first failure.
//
// Usage: node client.js PG_HOST:PORT MYSQL_HOST:PORT
'use strict';
const assert = require('node:assert/strict');
const knex = require('knex');

const [pgAddr, myAddr] = process.argv.slice(2);
const split = (a) => { const i = a.lastIndexOf(':'); return { host: a.slice(0, i), port: Number(a.slice(i + 1)) }; };

async function check(db, label, schema) {
  const people = () => (schema ? db.withSchema(schema).from('people') : db.from('people'));
  // A grouped count, ordered by the key.
  let rows = await people().select('sex').count({ n: '*' }).groupBy('sex').orderBy('sex');
  assert.deepEqual(rows.map((r) => r.sex), ['Female', 'Male']);
  for (const r of rows) assert.ok(Number(r.n) > 500, JSON.stringify(r));
  // A filtered average with a bound parameter.
  rows = await people().avg({ a: 'age' }).where('sex', '=', 'Female').andWhere('age', '>=', 21);
  const a = Number(rows[0].a);
  assert.ok(a >= 21 && a <= 90, JSON.stringify(rows));
  // whereBetween / whereIn with several aggregates per group.
  rows = await people().select('income').sum({ h: 'hours_per_week' }).count({ n: '*' })
    .whereBetween('age', [25, 65]).whereIn('workclass', ['Private', 'State-gov']).groupBy('income').orderBy('income');
  assert.deepEqual(rows.map((r) => r.income), ['<=50K', '>50K']);
  // A refusal is an error the driver reports, and the connection survives.
  await assert.rejects(people().select('age').limit(5));
  rows = await people().count({ n: '*' });
  assert.ok(Number(rows[0].n) > 4000, JSON.stringify(rows));
  console.log(`knex ${label} ok`);
}

(async () => {
  const pg = knex({ client: 'pg', connection: { ...split(pgAddr), user: 'analyst', password: 'demo', database: 'demo' }, pool: { min: 0, max: 2 } });
  const my = knex({ client: 'mysql2', connection: { ...split(myAddr), user: 'analyst', password: 'demo', database: 'demo' }, pool: { min: 0, max: 2 } });
  try {
    await check(pg, 'postgres', 'public');
    await check(my, 'mysql', null);
  } finally {
    await pg.destroy();
    await my.destroy();
  }
})().catch((e) => { console.error(e); process.exit(1); });
