// Compatibility suite: the official Woovi Node SDK (@woovi/node-sdk 1.3.3) against a running server.
//
//   BASE_URL=http://127.0.0.1:8080 APP_ID=<partner company App ID> node --test sdk.test.mjs
//
// The tests run in order and share state (a charge created early is paid, refunded, ...). When a test
// needs state that an earlier, failed test should have produced, it is skipped with a reason; the
// earlier failure is what to look at. Test names that say "[fetch]" use fetch with the same
// Authorization header because the SDK has no (working) method for that call.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createClient } from '@woovi/node-sdk';
import { Webhook } from 'standardwebhooks';
import crypto from 'node:crypto';

const BASE_URL = (process.env.BASE_URL || '').replace(/\/+$/, '');
const APP_ID = process.env.APP_ID || '';
if (!BASE_URL || !APP_ID) {
  throw new Error('set BASE_URL (e.g. http://127.0.0.1:8080) and APP_ID (the App ID printed by the server)');
}

const RUN = `${Date.now()}${Math.floor(Math.random() * 1e4).toString().padStart(4, '0')}`;
const T = { timeout: 20_000 }; // per-test bound: a hung request fails the test instead of the run
const CPF = '52998224725';
const CHARGE_VALUE = 1000;

const sdk = createClient({ appId: APP_ID, baseUrl: BASE_URL });

// ---------------------------------------------------------------- helpers

/** Check digits for a numeric CPF (weights 10..2 and 11..2, mod 11). */
export function cpfCheckDigits(nine) {
  const dv = (digits) => {
    const w0 = digits.length + 1;
    let sum = 0;
    for (let i = 0; i < digits.length; i++) sum += Number(digits[i]) * (w0 - i);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = dv(nine);
  const d2 = dv(nine + d1);
  return `${nine}${d1}${d2}`;
}

/** Check digits for a numeric CNPJ (brcode.md §3.3). */
export function cnpjCheckDigits(twelve) {
  const W1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
  const W2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
  const dv = (digits, w) => {
    let sum = 0;
    for (let i = 0; i < digits.length; i++) sum += Number(digits[i]) * w[i];
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = dv(twelve, W1);
  const d2 = dv(twelve + d1, W2);
  return `${twelve}${d1}${d2}`;
}

function randomDigits(n) {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(Math.random() * 10);
  return s;
}
function freshCpf() {
  for (;;) {
    const nine = randomDigits(9);
    if (!/^(\d)\1*$/.test(nine)) return cpfCheckDigits(nine);
  }
}
function freshCnpj() {
  for (;;) {
    const base = randomDigits(8);
    if (!/^(\d)\1*$/.test(base)) return cnpjCheckDigits(`${base}0001`);
  }
}

/** Raw HTTP call with the SDK's headers. Returns {status, headers, body (parsed JSON or null), text}. */
async function api(method, path, { body, auth = APP_ID, query } = {}) {
  const url = new URL(BASE_URL + path);
  if (query) for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  const headers = { 'Content-Type': 'application/json' };
  if (auth !== null) headers.Authorization = auth;
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, body: json, text };
}

/** Sandbox payment (no SDK method): GET /openpix/testing?transactionID=... or ?identifier=... */
async function sandboxPay(query) {
  const r = await api('GET', '/openpix/testing', { query });
  assert.ok(r.status >= 200 && r.status < 300, `testing route ${JSON.stringify(query)} -> ${r.status} ${r.text}`);
  return r;
}

/** Poll fn() until pred(value) holds; bounded. Returns the last value. */
async function waitFor(fn, pred, { tries = 40, delayMs = 250 } = {}) {
  let v;
  for (let i = 0; i < tries; i++) {
    v = await fn();
    if (pred(v)) return v;
    await new Promise((r) => setTimeout(r, delayMs));
  }
  return v;
}

/** Skip the current test when an earlier test did not produce what it needs. */
function need(t, ...pairs) {
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i] === undefined || pairs[i] === null) {
      t.skip(`prerequisite missing: ${pairs[i + 1]} (an earlier test failed)`);
      return false;
    }
  }
  return true;
}

/** assert.rejects for SDK calls: the SDK throws the parsed JSON error body. */
async function rejectsWithErrorBody(promise, what) {
  let thrown;
  await assert.rejects(promise, (err) => {
    thrown = err;
    return true;
  }, `${what} should reject`);
  assert.ok(!(thrown instanceof Error), `${what}: expected a parsed JSON error body, got ${thrown}`);
  assert.equal(typeof thrown, 'object');
  assert.ok(thrown !== null);
  return thrown;
}

/** The list array under `key`, with a clear failure when the server used another key. */
function items(res, key) {
  assert.ok(
    res && Array.isArray(res[key]),
    `response key \`${key}\` must be an array; got keys [${Object.keys(res ?? {}).join(', ')}]`,
  );
  return res[key];
}

const isIso = (s) => typeof s === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s));
const nonEmpty = (s) => typeof s === 'string' && s.length > 0;
const e2e = (tx) => tx.endToEndId ?? tx.endToEndID;
const taxIdOf = (x) => (x && typeof x === 'object' ? x.taxID : x);

function assertPageInfo(pi, where) {
  assert.equal(typeof pi, 'object', `${where}: pageInfo missing`);
  assert.ok(pi !== null, `${where}: pageInfo missing`);
  for (const k of ['skip', 'limit', 'totalCount']) assert.equal(typeof pi[k], 'number', `${where}: pageInfo.${k}`);
  for (const k of ['hasPreviousPage', 'hasNextPage']) assert.equal(typeof pi[k], 'boolean', `${where}: pageInfo.${k}`);
}

// shared state across the ordered flows
const S = {};

// ---------------------------------------------------------------- tests

describe('helpers (no server)', () => {
  it('CPF/CNPJ check digits match known examples', () => {
    assert.equal(cpfCheckDigits('529982247'), CPF);
    assert.equal(cnpjCheckDigits('112223330001'), '11222333000181');
    assert.equal(cnpjCheckDigits('000000000001'), '00000000000191');
  });
});

describe('server reachable', () => {
  it('[fetch] GET /health is 200', T, async () => {
    const r = await api('GET', '/health', { auth: null });
    assert.equal(r.status, 200);
  });
});

describe('customers', () => {
  it('customer.create with name, taxID (CPF), email, phone', T, async () => {
    const correlationID = `cust-${RUN}`;
    const res = await sdk.customer.create({
      name: `Customer ${RUN}`,
      taxID: CPF,
      email: `cust-${RUN}@example.com`,
      phone: '+5511999990001',
      correlationID,
    });
    const c = res.customer;
    assert.ok(c, 'response key `customer`');
    assert.equal(c.name, `Customer ${RUN}`);
    assert.equal(c.email, `cust-${RUN}@example.com`);
    assert.equal(c.phone, '+5511999990001');
    assert.equal(taxIdOf(c.taxID), CPF);
    assert.deepEqual(c.taxID, { taxID: CPF, type: 'BR:CPF' });
    assert.equal(c.correlationID, correlationID);
    S.customer = c;
  });

  it('customer.create a second customer (another valid CPF)', T, async () => {
    const res = await sdk.customer.create({
      name: `Second ${RUN}`,
      taxID: freshCpf(),
      email: `second-${RUN}@example.com`,
      correlationID: `cust2-${RUN}`,
    });
    assert.equal(res.customer.correlationID, `cust2-${RUN}`);
    S.customer2 = res.customer;
  });

  it('customer.get by correlationID', T, async (t) => {
    if (!need(t, S.customer, 'customer')) return;
    const res = await sdk.customer.get({ id: S.customer.correlationID });
    assert.equal(res.customer.correlationID, S.customer.correlationID);
    assert.equal(res.customer.name, S.customer.name);
    assert.equal(taxIdOf(res.customer.taxID), CPF);
  });

  it('customer.list with skip/limit -> customers + pageInfo.totalCount', T, async (t) => {
    if (!need(t, S.customer2, 'two customers')) return;
    const p1 = await sdk.customer.list({ skip: 0, limit: 1 });
        assert.equal(items(p1, 'customers').length, 1);
    assertPageInfo(p1.pageInfo, 'customer.list');
    assert.equal(p1.pageInfo.skip, 0);
    assert.equal(p1.pageInfo.limit, 1);
    assert.ok(p1.pageInfo.totalCount >= 2, `totalCount ${p1.pageInfo.totalCount} >= 2`);
    assert.equal(p1.pageInfo.hasNextPage, true);
    assert.equal(p1.pageInfo.hasPreviousPage, false);

    const p2 = await sdk.customer.list({ skip: 1, limit: 1 });
    assert.equal(items(p2, 'customers').length, 1);
    assert.equal(p2.pageInfo.skip, 1);
    assert.equal(p2.pageInfo.hasPreviousPage, true);
    assert.notEqual(items(p2, 'customers')[0].correlationID, items(p1, 'customers')[0].correlationID, 'pages must not overlap');

    const all = await sdk.customer.list({ skip: 0, limit: 100 });
    assert.equal(all.pageInfo.totalCount, p1.pageInfo.totalCount);
    const ids = items(all, 'customers').map((c) => c.correlationID);
    assert.ok(ids.includes(S.customer.correlationID) && ids.includes(S.customer2.correlationID));
  });

  it('[fetch] customer update: PATCH /api/v1/customer/{correlationID} (no SDK method)', T, async (t) => {
    if (!need(t, S.customer, 'customer')) return;
    const r = await api('PATCH', `/api/v1/customer/${encodeURIComponent(S.customer.correlationID)}`, {
      body: { name: `Updated ${RUN}`, email: `upd-${RUN}@example.com` },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.customer.name, `Updated ${RUN}`);
    assert.equal(r.body.customer.email, `upd-${RUN}@example.com`);
    assert.equal(taxIdOf(r.body.customer.taxID), CPF, 'untouched fields are kept');
    const g = await sdk.customer.get({ id: S.customer.correlationID });
    assert.equal(g.customer.name, `Updated ${RUN}`);
    assert.equal(g.customer.phone, '+5511999990001');
  });
});

describe('charges', () => {
  it('charge.create value 1000 with customer -> full charge', T, async () => {
    const correlationID = `charge-${RUN}`;
    const res = await sdk.charge.create({
      correlationID,
      value: CHARGE_VALUE,
      comment: `compat ${RUN}`,
      customer: { name: `Customer ${RUN}`, taxID: CPF, email: `cust-${RUN}@example.com`, phone: '+5511999990001' },
    });
    const c = res.charge;
    assert.ok(c, 'response key `charge`');
    assert.equal(c.correlationID, correlationID);
    assert.equal(c.value, CHARGE_VALUE);
    assert.equal(c.status, 'ACTIVE');
    assert.ok(typeof c.brCode === 'string' && c.brCode.startsWith('000201'), `brCode ${c.brCode}`);
    for (const k of ['paymentLinkID', 'globalID', 'transactionID', 'identifier']) assert.ok(nonEmpty(c[k]), `charge.${k}`);
    assert.equal(typeof c.expiresIn, 'number', 'expiresIn is a number of seconds');
    assert.ok(c.expiresIn > 0);
    assert.ok(isIso(c.expiresDate), `expiresDate ${c.expiresDate}`);
    assert.ok(isIso(c.createdAt), `createdAt ${c.createdAt}`);
    assert.ok(Date.parse(c.expiresDate) > Date.parse(c.createdAt));
    assert.equal(c.customer?.name, `Customer ${RUN}`);
    assert.equal(taxIdOf(c.customer?.taxID), CPF);
    // create envelope: {charge, correlationID, brCode}
    assert.equal(res.correlationID, correlationID, 'envelope correlationID');
    assert.equal(res.brCode, c.brCode, 'envelope brCode');
    S.charge = c;
  });

  it('charge.create with return_existing=true returns the same charge', T, async (t) => {
    if (!need(t, S.charge, 'charge')) return;
    const res = await sdk.charge.create(
      { correlationID: S.charge.correlationID, value: CHARGE_VALUE },
      { return_existing: 'true' },
    );
    assert.equal(res.charge.correlationID, S.charge.correlationID);
    assert.equal(res.charge.transactionID, S.charge.transactionID);
    assert.equal(res.charge.globalID, S.charge.globalID);
  });

  it('charge.get by correlationID', T, async (t) => {
    if (!need(t, S.charge, 'charge')) return;
    const { charge: c } = await sdk.charge.get({ id: S.charge.correlationID });
    assert.equal(c.correlationID, S.charge.correlationID);
    assert.equal(c.value, CHARGE_VALUE);
    assert.equal(c.status, 'ACTIVE');
    assert.equal(c.brCode, S.charge.brCode);
    assert.equal(c.transactionID, S.charge.transactionID);
    assert.equal(c.identifier, S.charge.identifier);
  });

  it('charge.list -> charges + pageInfo, contains the charge', T, async (t) => {
    if (!need(t, S.charge, 'charge')) return;
    const dflt = await sdk.charge.list();
    items(dflt, 'charges'); // wire key is `charges` (the SDK type says `refunds`)
    assertPageInfo(dflt.pageInfo, 'charge.list');
    assert.equal(dflt.pageInfo.limit, 10, 'SDK default limit=10');
    const res = await sdk.charge.list({ skip: 0, limit: 100 });
    assert.ok(items(res, 'charges').some((c) => c.correlationID === S.charge.correlationID));
  });

  it('charge.list with status filter (extra key in the SDK pagination object -> &status=)', T, async (t) => {
    if (!need(t, S.charge, 'charge')) return;
    const act = await sdk.charge.list({ skip: 0, limit: 100, status: 'ACTIVE' });
    assert.ok(items(act, 'charges').length > 0);
    assert.ok(items(act, 'charges').every((c) => c.status === 'ACTIVE'), 'only ACTIVE');
    assert.ok(items(act, 'charges').some((c) => c.correlationID === S.charge.correlationID));
    const done = await sdk.charge.list({ skip: 0, limit: 100, status: 'COMPLETED' });
    assert.ok(items(done, 'charges').every((c) => c.status === 'COMPLETED'));
    assert.ok(!items(done, 'charges').some((c) => c.correlationID === S.charge.correlationID));
  });

  it('charge.delete another charge -> {status, id}; then get rejects', T, async () => {
    const correlationID = `charge-del-${RUN}`;
    await sdk.charge.create({ correlationID, value: 500 });
    const del = await sdk.charge.delete({ id: correlationID });
    assert.ok(nonEmpty(del.status), 'delete returns a status');
    assert.ok(nonEmpty(del.id), 'delete returns the id');
    const err = await rejectsWithErrorBody(sdk.charge.get({ id: correlationID }), 'get deleted charge');
    assert.ok(err.error, 'error body has `error`');
  });

  it('account balance snapshot before paying (account.list + account.get)', T, async () => {
    const accounts = items(await sdk.account.list(), 'accounts');
    assert.ok(Array.isArray(accounts) && accounts.length > 0, 'at least one account');
    const acc = accounts.find((a) => a.isDefault) ?? accounts[0];
    const { account } = await sdk.account.get({ id: acc.accountId });
    S.accountId = account.accountId;
    S.balanceBefore = account.balance;
  });

  it('[fetch] pay the charge: GET /openpix/testing?transactionID= (no SDK method)', T, async (t) => {
    if (!need(t, S.charge, 'charge')) return;
    await sandboxPay({ transactionID: S.charge.transactionID });
    S.paid = true;
  });

  it('charge.get shows COMPLETED after payment', T, async (t) => {
    if (!need(t, S.paid, 'paid charge')) return;
    const res = await waitFor(
      () => sdk.charge.get({ id: S.charge.correlationID }),
      (r) => r.charge.status === 'COMPLETED',
    );
    assert.equal(res.charge.status, 'COMPLETED');
    S.chargePaid = res.charge;
    const done = await sdk.charge.list({ skip: 0, limit: 100, status: 'COMPLETED' });
    assert.ok(items(done, 'charges').some((c) => c.correlationID === S.charge.correlationID), 'listed as COMPLETED');
    const act = await sdk.charge.list({ skip: 0, limit: 100, status: 'ACTIVE' });
    assert.ok(!items(act, 'charges').some((c) => c.correlationID === S.charge.correlationID), 'no longer ACTIVE');
  });
});

describe('transactions', () => {
  it('transactions.list -> transactions + pageInfo', T, async (t) => {
    if (!need(t, S.chargePaid, 'paid charge')) return;
    const res = await sdk.transactions.list();
    items(res, 'transactions');
    assertPageInfo(res.pageInfo, 'transactions.list');
    assert.ok(items(res, 'transactions').length >= 1);
  });

  it('transactions.list with charge filter -> exactly the payment', T, async (t) => {
    if (!need(t, S.chargePaid, 'paid charge')) return;
    const res = await sdk.transactions.list({
      pagination: { skip: 0, limit: 100 },
      query: { charge: S.charge.correlationID },
    });
    assert.equal(items(res, 'transactions').length, 1, 'one payment for the charge');
    const tx = items(res, 'transactions')[0];
    assert.equal(tx.value, CHARGE_VALUE);
    assert.ok(nonEmpty(e2e(tx)), 'endToEndId');
    assert.ok(nonEmpty(tx.transactionID), 'transactionID');
    assert.ok(isIso(tx.time), `time ${tx.time}`);
    if (tx.type !== undefined) assert.equal(tx.type, 'PAYMENT');
    if (tx.charge && typeof tx.charge === 'object') assert.equal(tx.charge.correlationID, S.charge.correlationID);
    S.tx = tx;
    // the charge filter also accepts the charge's transactionID
    const byTxid = await sdk.transactions.list({ query: { charge: S.charge.transactionID } });
    assert.equal(items(byTxid, 'transactions').length, 1);
    assert.equal(e2e(items(byTxid, 'transactions')[0]), e2e(tx));
  });

  it('transactions.get by transaction id and by endToEndId', T, async (t) => {
    if (!need(t, S.tx, 'charge transaction')) return;
    const a = await sdk.transactions.get({ id: S.tx.transactionID });
    assert.equal(e2e(a.transaction), e2e(S.tx));
    assert.equal(a.transaction.value, CHARGE_VALUE);
    const b = await sdk.transactions.get({ id: e2e(S.tx) });
    assert.equal(b.transaction.transactionID, S.tx.transactionID);
    assert.equal(e2e(b.transaction), e2e(S.tx));
  });
});

describe('accounts', () => {
  it('account.list -> accounts + pageInfo', T, async () => {
    const res = await sdk.account.list();
    assert.ok(items(res, 'accounts').length >= 1, 'at least one account');
    assertPageInfo(res.pageInfo, 'account.list');
    for (const a of items(res, 'accounts')) {
      assert.ok(nonEmpty(a.accountId));
      assert.equal(typeof a.isDefault, 'boolean');
    }
    assert.equal(items(res, 'accounts').filter((a) => a.isDefault).length, 1, 'exactly one default account');
  });

  it('account.get: balance grew by value - fee; available = total - blocked', T, async (t) => {
    if (!need(t, S.accountId, 'account', S.chargePaid, 'paid charge')) return;
    const { account } = await sdk.account.get({ id: S.accountId });
    assert.equal(account.accountId, S.accountId);
    const b = account.balance;
    for (const k of ['total', 'blocked', 'available']) assert.equal(typeof b[k], 'number', `balance.${k}`);
    assert.equal(b.available, b.total - b.blocked, 'available = total - blocked');
    assert.ok(b.total > 0, 'total > 0');
    const fee = [S.chargePaid.fee, S.chargePaid.paymentMethods?.pix?.fee].find((f) => typeof f === 'number');
    const dTotal = b.total - S.balanceBefore.total;
    const dAvail = b.available - S.balanceBefore.available;
    if (fee !== undefined) {
      assert.equal(dTotal, CHARGE_VALUE - fee, `total delta ${dTotal} = value ${CHARGE_VALUE} - fee ${fee}`);
      assert.equal(dAvail, CHARGE_VALUE - fee, `available delta ${dAvail} = value - fee`);
    } else {
      t.diagnostic('charge exposes no numeric fee; checking 0 < delta <= value only');
      assert.ok(dTotal > 0 && dTotal <= CHARGE_VALUE, `total delta ${dTotal}`);
      assert.ok(dAvail > 0 && dAvail <= CHARGE_VALUE, `available delta ${dAvail}`);
    }
  });
});

describe('transfers between accounts', () => {
  it('[fetch] POST /api/v1/account {pixKey, name} -> {account} with its key; account.list shows every key', T, async () => {
    const pixKey = `caixa-${RUN}@example.com`;
    const r = await api('POST', '/api/v1/account', { body: { pixKey, name: `Caixa ${RUN}` } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.account?.pixKey, pixKey);
    assert.equal(r.body.account.isDefault, false);
    assert.deepEqual(r.body.account.balance, { total: 0, blocked: 0, available: 0 });
    S.caixa = r.body.account;
    const list = items(await sdk.account.list({ skip: 0, limit: 100 }), 'accounts');
    assert.ok(list.every((a) => nonEmpty(a.pixKey)), 'every account has its Pix key');
    S.defaultKey = list.find((a) => a.isDefault)?.pixKey;
    assert.ok(nonEmpty(S.defaultKey), 'the default account has the company key');
  });

  it('transfer.create moves value by Pix key -> {transaction: {value, time, correlationID}}; a retry moves nothing', T, async (t) => {
    if (!need(t, S.caixa, 'second account', S.defaultKey, 'default key', S.accountId, 'account')) return;
    const before = (await sdk.account.get({ id: S.accountId })).account.balance;
    const correlationID = `transfer-${RUN}`;
    const res = await sdk.transfer.create({ value: 100, fromPixKey: S.defaultKey, toPixKey: S.caixa.pixKey, correlationID });
    assert.deepEqual(Object.keys(res.transaction).sort(), ['correlationID', 'time', 'value']);
    assert.equal(res.transaction.value, 100);
    assert.equal(res.transaction.correlationID, correlationID);
    assert.ok(isIso(res.transaction.time), 'time is ISO 8601');
    const again = await sdk.transfer.create({ value: 100, fromPixKey: S.defaultKey, toPixKey: S.caixa.pixKey, correlationID });
    assert.deepEqual(again, res, 'the same correlationID returns the first transfer');
    assert.equal((await sdk.account.get({ id: S.caixa.accountId })).account.balance.available, 100, 'moved once');
    assert.equal((await sdk.account.get({ id: S.accountId })).account.balance.available, before.available - 100);

    const err = await rejectsWithErrorBody(
      sdk.transfer.create({ value: 101, fromPixKey: S.caixa.pixKey, toPixKey: S.defaultKey }),
      'transfer above the available balance',
    );
    assert.equal(err.error, 'Account does not have enough balance to complete the operation');
    const back = await sdk.transfer.create({ value: 100, fromPixKey: S.caixa.pixKey, toPixKey: S.defaultKey, correlationID: `back-${RUN}` });
    assert.equal(back.transaction.value, 100);
    assert.deepEqual((await sdk.account.get({ id: S.accountId })).account.balance, before, 'the default account is as it was');
  });

  it('[fetch] a transfer to the same account, or from an unknown key, is a 400 {error}', T, async (t) => {
    if (!need(t, S.defaultKey, 'default key')) return;
    let r = await api('POST', '/api/v1/transfer', { body: { value: 1, fromPixKey: S.defaultKey, toPixKey: S.defaultKey } });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { error: 'toPixKey must name another account than fromPixKey' });
    r = await api('POST', '/api/v1/transfer', { body: { value: 1, fromPixKey: `nobody-${RUN}@example.com`, toPixKey: S.defaultKey } });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { error: `Account not found for fromPixKey nobody-${RUN}@example.com` });
  });
});

describe('charge refunds', () => {
  it('chargeRefund.create 100 on the paid charge', T, async (t) => {
    if (!need(t, S.chargePaid, 'paid charge')) return;
    const correlationID = `crefund-${RUN}`;
    const res = await sdk.chargeRefund.create({
      chargeId: S.charge.correlationID,
      correlationID,
      value: 100,
      comment: 'compat refund',
    });
    const r = res.refund;
    assert.ok(r, 'key `refund`');
    assert.equal(r.correlationID, correlationID);
    assert.equal(r.value, 100);
    assert.ok(['IN_PROCESSING', 'CONFIRMED'].includes(r.status), `status ${r.status}`);
    assert.equal(r.comment, 'compat refund');
    S.chargeRefund = r;
  });

  it('chargeRefund.list of the charge', T, async (t) => {
    if (!need(t, S.chargeRefund, 'charge refund')) return;
    const res = await sdk.chargeRefund.list({ chargeId: S.charge.correlationID });
    items(res, 'refunds');
    const mine = items(res, 'refunds').find((r) => r.correlationID === S.chargeRefund.correlationID);
    assert.ok(mine, 'refund listed');
    assert.equal(mine.value, 100);
  });
});

describe('transaction refunds', () => {
  it('refund.create with transactionEndToEndId', T, async (t) => {
    if (!need(t, S.tx, 'charge transaction')) return;
    const correlationID = `refund-${RUN}`;
    const res = await sdk.refund.create({
      value: 100,
      transactionEndToEndId: e2e(S.tx),
      correlationID,
      comment: 'compat tx refund',
    });
    const r = res.refund;
    assert.ok(r, 'key `refund`');
    assert.equal(r.correlationID, correlationID);
    assert.equal(r.value, 100);
    assert.equal(r.status, 'IN_PROCESSING');
    S.refund = r;
  });

  it('refund.get by correlationID -> pixTransactionRefund', T, async (t) => {
    if (!need(t, S.refund, 'refund')) return;
    const res = await sdk.refund.get({ id: S.refund.correlationID });
    const r = res.pixTransactionRefund;
    assert.ok(r, 'key `pixTransactionRefund`');
    assert.equal(r.correlationID, S.refund.correlationID);
    assert.equal(r.value, 100);
  });

  it('refund.list -> refunds + pageInfo', T, async (t) => {
    if (!need(t, S.refund, 'refund')) return;
    const res = await sdk.refund.list({ skip: 0, limit: 100 });
    items(res, 'refunds');
    assertPageInfo(res.pageInfo, 'refund.list');
    assert.ok(items(res, 'refunds').some((r) => r.correlationID === S.refund.correlationID));
  });
});

describe('static QR codes', () => {
  it('pixQrCode.create', T, async () => {
    const correlationID = `qr-${RUN}`;
    const res = await sdk.pixQrCode.create({ name: `qr-${RUN}`, correlationID, value: 500, comment: 'compat qr' });
    const q = res.pixQrCode;
    assert.ok(q, 'key `pixQrCode`');
    assert.equal(q.correlationID, correlationID);
    assert.equal(q.name, `qr-${RUN}`);
    assert.equal(Number(q.value), 500);
    assert.ok(nonEmpty(q.identifier), 'identifier');
    assert.ok(nonEmpty(q.paymentLinkID), 'paymentLinkID');
    assert.ok(typeof q.brCode === 'string' && q.brCode.startsWith('000201'), `brCode ${q.brCode}`);
    assert.ok(isIso(q.createdAt));
    S.qr = q;
  });

  it('pixQrCode.get by correlationID and by identifier', T, async (t) => {
    if (!need(t, S.qr, 'qr')) return;
    const a = await sdk.pixQrCode.get({ id: S.qr.correlationID });
    assert.equal(a.pixQrCode.identifier, S.qr.identifier);
    const b = await sdk.pixQrCode.get({ id: S.qr.identifier });
    assert.equal(b.pixQrCode.correlationID, S.qr.correlationID);
  });

  it('pixQrCode.list -> pixQrCodes + pageInfo', T, async (t) => {
    if (!need(t, S.qr, 'qr')) return;
    const res = await sdk.pixQrCode.list({ skip: 0, limit: 100 });
    items(res, 'pixQrCodes');
    assertPageInfo(res.pageInfo, 'pixQrCode.list');
    assert.ok(items(res, 'pixQrCodes').some((q) => q.correlationID === S.qr.correlationID));
  });

  it('[fetch] pay the QR twice via /openpix/testing?identifier= -> two transactions (pixQrCode filter)', T, async (t) => {
    if (!need(t, S.qr, 'qr')) return;
    await sandboxPay({ identifier: S.qr.identifier });
    await sandboxPay({ identifier: S.qr.identifier });
    const res = await waitFor(
      () => sdk.transactions.list({ pagination: { skip: 0, limit: 100 }, query: { pixQrCode: S.qr.identifier } }),
      (r) => Array.isArray(r?.transactions) && r.transactions.length >= 2,
    );
    assert.equal(items(res, 'transactions').length, 2);
    for (const tx of items(res, 'transactions')) assert.equal(tx.value, 500);
    assert.notEqual(e2e(items(res, 'transactions')[0]), e2e(items(res, 'transactions')[1]), 'distinct endToEndIds');
    const byCorr = await sdk.transactions.list({ query: { pixQrCode: S.qr.correlationID } });
    assert.equal(items(byCorr, 'transactions').length, 2, 'filter by QR correlationID too');
  });
});

describe('subaccounts', () => {
  const pixKey = `sub-${RUN}@example.com`;

  it('subAccount.create by pixKey + name -> SubAccount', T, async () => {
    const res = await sdk.subAccount.create({ pixKey, name: `Sub ${RUN}` });
    const s = res.SubAccount;
    assert.ok(s, 'key `SubAccount` (capital S)');
    assert.equal(s.pixKey, pixKey);
    assert.equal(s.name, `Sub ${RUN}`);
    assert.equal(s.balance ?? 0, 0);
    S.sub = s;
  });

  it('subAccount.create again returns the same subaccount', T, async (t) => {
    if (!need(t, S.sub, 'subaccount')) return;
    const res = await sdk.subAccount.create({ pixKey, name: `Sub ${RUN}` });
    assert.equal(res.SubAccount.pixKey, pixKey);
    assert.equal(res.SubAccount.name, `Sub ${RUN}`);
    const list = await sdk.subAccount.list({ skip: 0, limit: 100 });
    assert.equal(items(list, 'subAccounts').filter((s) => s.pixKey === pixKey).length, 1, 'not duplicated');
  });

  it('subAccount.get by pix key (unencoded `@` in the path)', T, async (t) => {
    if (!need(t, S.sub, 'subaccount')) return;
    const res = await sdk.subAccount.get({ id: pixKey });
    assert.equal(res.SubAccount.pixKey, pixKey);
    assert.equal(typeof res.SubAccount.balance, 'number');
    S.subBalanceBefore = res.SubAccount.balance;
  });

  it('subAccount.list -> subAccounts + pageInfo', T, async (t) => {
    if (!need(t, S.sub, 'subaccount')) return;
    const res = await sdk.subAccount.list();
    items(res, 'subAccounts');
    assertPageInfo(res.pageInfo, 'subAccount.list');
    const all = await sdk.subAccount.list({ skip: 0, limit: 100 });
    assert.ok(items(all, 'subAccounts').some((s) => s.pixKey === pixKey));
  });

  it('[fetch pay] charge with subaccount=pixKey, paid -> subaccount balance increased', T, async (t) => {
    if (!need(t, S.sub, 'subaccount', S.subBalanceBefore, 'subaccount balance')) return;
    const value = 2000;
    const correlationID = `charge-sub-${RUN}`;
    const { charge } = await sdk.charge.create({ correlationID, value, subaccount: pixKey });
    assert.equal(charge.status, 'ACTIVE');
    await sandboxPay({ transactionID: charge.transactionID });
    const done = await waitFor(() => sdk.charge.get({ id: correlationID }), (r) => r.charge.status === 'COMPLETED');
    assert.equal(done.charge.status, 'COMPLETED');
    const after = await waitFor(
      () => sdk.subAccount.get({ id: pixKey }),
      (r) => r.SubAccount.balance > S.subBalanceBefore,
    );
    const delta = after.SubAccount.balance - S.subBalanceBefore;
    assert.ok(delta > 0 && delta <= value, `subaccount balance delta ${delta} in (0, ${value}]`);
    S.subBalance = after.SubAccount.balance;
  });

  it('subAccount.withdraw is broken client-side in SDK 1.3.3 (GET with a body; never reaches the server)', T, async () => {
    await assert.rejects(sdk.subAccount.withdraw({ id: pixKey }), (err) => {
      assert.ok(err instanceof TypeError, `expected a client-side TypeError, got ${JSON.stringify(err)}`);
      return true;
    });
  });
});

describe('cashback fidelity', () => {
  const taxID = freshCpf();

  it('[fetch] POST /api/v1/cashback-fidelity: 201 when new (the SDK hides the status)', T, async () => {
    // register the fresh CPF as a customer first, in case the server requires one
    await sdk.customer.create({ name: `Cashback ${RUN}`, taxID, email: `cb-${RUN}@example.com`, correlationID: `cust-cb-${RUN}` });
    const r = await api('POST', '/api/v1/cashback-fidelity', { body: { taxID, value: 150 } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.cashback?.value, 150);
    assert.equal(typeof r.body.message, 'string');
    S.cashback = r.body;
  });

  it('cashback.getOrCreate again returns the existing pending cashback (200)', T, async (t) => {
    if (!need(t, S.cashback, 'cashback')) return;
    const res = await sdk.cashback.getOrCreate({ taxID, value: 150 });
    assert.equal(res.cashback?.value, 150);
    assert.equal(typeof res.message, 'string');
    const r = await api('POST', '/api/v1/cashback-fidelity', { body: { taxID, value: 150 } });
    assert.equal(r.status, 200, 'existing -> 200');
  });

  it('cashback.get balance by taxID', T, async (t) => {
    if (!need(t, S.cashback, 'cashback')) return;
    const res = await sdk.cashback.get({ taxID });
    assert.equal(typeof res.balance, 'number');
    assert.equal(typeof res.status, 'string');
  });
});

describe('partner', () => {
  const cnpj = freshCnpj();

  it('partner.createPreRegistration with a fresh valid CNPJ', T, async () => {
    const res = await sdk.partner.createPreRegistration({
      preRegistration: { name: `Affiliate ${RUN}`, taxID: { taxID: cnpj, type: 'BR:CNPJ' }, website: 'https://example.com' },
      user: { firstName: 'Ana', lastName: `Run${RUN}`, email: `ana-${RUN}@example.com`, phone: '+5511999990002' },
    });
    assert.ok(res.preRegistration, 'key `preRegistration`');
    assert.equal(res.preRegistration.name, `Affiliate ${RUN}`);
    assert.equal(taxIdOf(res.preRegistration.taxID), cnpj);
    assert.equal(res.user?.email, `ana-${RUN}@example.com`);
    S.cnpj = cnpj;
  });

  it('partner.get by taxID -> {preRegistration:{preRegistration,user,company,account}}', T, async (t) => {
    if (!need(t, S.cnpj, 'pre-registration')) return;
    const res = await sdk.partner.get({ taxID: cnpj });
    const p = res.preRegistration;
    assert.ok(p?.preRegistration, 'nested preRegistration');
    assert.equal(taxIdOf(p.preRegistration.taxID), cnpj);
    assert.equal(p.preRegistration.name, `Affiliate ${RUN}`);
    assert.equal(p.user?.firstName, 'Ana');
    assert.ok('company' in p && 'account' in p, 'company and account keys');
  });

  it('partner.listPreRegistration (no query params) -> preRegistrations + pageInfo', T, async (t) => {
    if (!need(t, S.cnpj, 'pre-registration')) return;
    const res = await sdk.partner.listPreRegistration();
    items(res, 'preRegistrations');
    assert.equal(typeof res.pageInfo, 'object');
    assert.ok(
      items(res, 'preRegistrations').some((p) => taxIdOf(p.preRegistration?.taxID) === cnpj),
      'the new pre-registration is listed (default page)',
    );
  });

  it('partner.createApplication -> clientId + clientSecret', T, async (t) => {
    if (!need(t, S.cnpj, 'pre-registration')) return;
    const res = await sdk.partner.createApplication({
      application: { name: `app-${RUN}`, type: 'API' },
      taxID: { taxID: cnpj, type: 'BR:CNPJ' },
    });
    const a = res.application;
    assert.ok(a, 'key `application`');
    assert.ok(nonEmpty(a.clientId) && nonEmpty(a.clientSecret));
    assert.equal(a.name, `app-${RUN}`);
    assert.equal(a.type, 'API');
    assert.equal(a.isActive, true);
    S.newAppId = Buffer.from(`${a.clientId}:${a.clientSecret}`).toString('base64');
  });

  it('new company App ID (base64 clientId:clientSecret): empty customers, cannot see the first company\'s charge', T, async (t) => {
    if (!need(t, S.newAppId, 'application', S.charge, 'first company charge')) return;
    const other = createClient({ appId: S.newAppId, baseUrl: BASE_URL });
    const cs = await other.customer.list();
    assert.deepEqual(items(cs, 'customers'), []);
    assert.equal(cs.pageInfo.totalCount, 0);
    const err = await rejectsWithErrorBody(other.charge.get({ id: S.charge.correlationID }), 'foreign charge');
    assert.ok(err.error, 'not-found error body has `error`');
    const txs = await other.transactions.list();
    assert.deepEqual(items(txs, 'transactions'), []);
  });
});

describe('errors', () => {
  it('charge.create value -1 rejects with {error: string}', T, async () => {
    const err = await rejectsWithErrorBody(sdk.charge.create({ correlationID: `bad-${RUN}`, value: -1 }), 'value -1');
    assert.equal(typeof err.error, 'string', `error body: ${JSON.stringify(err)}`);
    assert.ok(err.error.length > 0);
  });

  it('a wrong App ID rejects (JSON body; HTTP 401 or 400)', T, async () => {
    const bad = createClient({ appId: Buffer.from('nope:nope').toString('base64'), baseUrl: BASE_URL });
    await rejectsWithErrorBody(bad.charge.list(), 'wrong App ID');
    const r = await api('GET', '/api/v1/charge', { auth: 'definitely-not-an-app-id' });
    assert.ok([400, 401].includes(r.status), `status ${r.status}`);
    assert.ok(r.body && typeof r.body === 'object', 'JSON error body');
  });

  it('[fetch] a missing Authorization header is rejected', T, async () => {
    const r = await api('GET', '/api/v1/charge', { auth: null });
    assert.ok([400, 401].includes(r.status), `status ${r.status}`);
  });

  it('customer.get of an unknown id rejects with an error body', T, async () => {
    const err = await rejectsWithErrorBody(sdk.customer.get({ id: `missing-${RUN}` }), 'unknown customer');
    assert.ok(err.error);
  });

  it('[fetch] an unknown charge is 400 {error: "Charge not found"}, as the spec says', T, async () => {
    const r = await api('GET', `/api/v1/charge/missing-${RUN}`);
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { error: 'Charge not found' });
  });

  it('payment.create with a used correlationID / payment.approve of an unknown one reject with the real API\'s {error}', T, async () => {
    const correlationID = `paydup-${RUN}`;
    await sdk.payment.create({ value: 100, destinationAlias: 'a@example.com', destinationAliasType: 'EMAIL', correlationID });
    const dup = await rejectsWithErrorBody(
      sdk.payment.create({ value: 100, destinationAlias: 'a@example.com', destinationAliasType: 'EMAIL', correlationID }),
      'payment.create twice',
    );
    assert.equal(dup.error, 'Já existe um pagamento com o correlationID fornecido');
    const unknown = await rejectsWithErrorBody(sdk.payment.approve({ correlationID: `missing-${RUN}` }), 'payment.approve unknown');
    assert.equal(unknown.error, 'Payment not found');
    const r = await api('POST', '/api/v1/payment', { body: { value: 100, destinationAlias: 'pix-key-not-found@woovi.com', correlationID: `nf-${RUN}` } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error, 'Pix key not found: pix-key-not-found@woovi.com');
  });
});

// ---------------------------------------------------------------- beyond the core flows

describe('extra: QR image, webhooks, subscriptions, payments, subaccount transfers, debits and credits', () => {
  let receiver;
  const deliveries = [];

  before(async () => {
    receiver = http.createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        let body = null;
        try {
          body = JSON.parse(data);
        } catch {}
        deliveries.push({ headers: req.headers, body, raw: data });
        res.writeHead(200).end();
      });
    });
    await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  });
  after(() => new Promise((r) => receiver.close(r)));

  it('charge.getQrCode only builds a woovi.com URL (client-side); [fetch] the PNG route on our server', T, async () => {
    // A charge of its own: the suite's first charge is paid by now, and a paid charge's
    // code is no longer drawn for payers (400).
    const { charge } = await sdk.charge.create({ correlationID: `charge-qr-${RUN}`, value: 700 });
    const url = sdk.charge.getQrCode({ id: charge.paymentLinkID });
    assert.equal(url, `https://api.woovi.com/openpix/charge/brcode/image/${charge.paymentLinkID}.png?size=1024`);
    const res = await fetch(`${BASE_URL}/openpix/charge/brcode/image/${charge.paymentLinkID}.png?size=600`, {
      headers: { Authorization: APP_ID },
      signal: AbortSignal.timeout(15_000),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') || '', /image\/png/);
    const buf = Buffer.from(await res.arrayBuffer());
    assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
    if (S.charge) { // paid earlier in the suite: its image is refused, with a reason
      const paid = await fetch(`${BASE_URL}/openpix/charge/brcode/image/${S.charge.paymentLinkID}.png?size=600`, { signal: AbortSignal.timeout(15_000) });
      assert.equal(paid.status, 400);
      assert.match((await paid.json()).error, /no longer shown/);
    }
  });

  it('webhook.create (wrapped body) / list with url filter; a new charge is delivered, signed (standardwebhooks, RSA)', T, async () => {
    const url = `http://127.0.0.1:${receiver.address().port}/hook-${RUN}`;
    const res = await sdk.webhook.create({
      webhook: { name: `hook-${RUN}`, event: 'OPENPIX:CHARGE_CREATED', url, authorization: `tok-${RUN}`, isActive: true },
    });
    const w = res.webhook;
    assert.ok(nonEmpty(w?.id), 'webhook.id');
    assert.equal(w.url, url);
    assert.equal(w.event, 'OPENPIX:CHARGE_CREATED');
    assert.equal(w.isActive, true);
    S.webhook = w;
    const list = await sdk.webhook.list({ pagination: { skip: 0, limit: 100 }, query: { url } });
    items(list, 'webhooks'); // wire key `webhooks` (the SDK type says `pixQrCodes`)
    assert.ok(items(list, 'webhooks').every((x) => x.url === url), 'url filter applied');
    assert.ok(items(list, 'webhooks').some((x) => x.id === w.id));

    const correlationID = `charge-hook-${RUN}`;
    await sdk.charge.create({ correlationID, value: 300 });
    const got = await waitFor(
      async () => deliveries.find((d) => d.body?.charge?.correlationID === correlationID),
      (d) => d !== undefined,
      { tries: 40, delayMs: 250 },
    );
    assert.ok(got, 'OPENPIX:CHARGE_CREATED delivered within 10 s');
    assert.equal(got.body.event, 'OPENPIX:CHARGE_CREATED');
    assert.equal(got.headers.authorization, `tok-${RUN}`, 'the webhook authorization comes back');
    // Standard Webhooks: the npm verifier accepts our webhook-id/-timestamp/-signature.
    assert.ok(w.hmacSecretKey?.startsWith('whsec_'), 'webhook.hmacSecretKey');
    const verified = new Webhook(w.hmacSecretKey).verify(got.raw, got.headers);
    assert.equal(verified.charge.correlationID, correlationID);
    assert.throws(() => new Webhook(w.hmacSecretKey).verify(got.raw + ' ', got.headers), 'a changed body fails');
    // x-webhook-signature: RSA-SHA256 over the raw body, with the public key served without auth.
    const keys = await fetch(`${BASE_URL}/api/v1/webhook/public-keys`, { signal: AbortSignal.timeout(15_000) });
    assert.equal(keys.status, 200);
    const { public_keys } = await keys.json();
    const key = public_keys.find((k) => k.is_current);
    assert.ok(crypto.verify('sha256', Buffer.from(got.raw), key.key, Buffer.from(got.headers['x-webhook-signature'], 'base64')), 'RSA signature');
    // the legacy X-OpenPix-Signature: base64 HMAC-SHA1 of the body keyed with the whole hmacSecretKey
    const legacy = crypto.createHmac('sha1', w.hmacSecretKey).update(got.raw).digest('base64');
    assert.equal(got.headers['x-openpix-signature'], legacy);
  });

  it('webhook.delete -> {status}', T, async (t) => {
    if (!need(t, S.webhook, 'webhook')) return;
    const res = await sdk.webhook.delete({ id: S.webhook.id });
    assert.ok(res.status !== undefined, 'delete returns status');
    const list = await sdk.webhook.list({ pagination: { skip: 0, limit: 100 }, query: { url: S.webhook.url } });
    assert.ok(!items(list, 'webhooks').some((x) => x.id === S.webhook.id));
  });

  it('subscription.create (SDK shape: no correlationID/type) and subscription.get by globalID', T, async () => {
    const res = await sdk.subscription.create({
      customer: { name: `Sub cust ${RUN}`, taxID: CPF, email: `subs-${RUN}@example.com`, phone: '+5511999990003' },
      value: 990,
      dayGenerateCharge: 5,
      chargeType: 'DYNAMIC',
      frequency: 'MONTHLY',
    });
    const s = res.subscription;
    assert.ok(nonEmpty(s?.globalID), 'subscription.globalID');
    assert.equal(s.value, 990);
    assert.equal(s.dayGenerateCharge, 5);
    const g = await sdk.subscription.get({ id: s.globalID });
    assert.equal(g.subscription.globalID, s.globalID);
    assert.equal(g.subscription.value, 990);
    assert.equal(g.subscription.frequency, 'MONTHLY');
    assert.equal(g.subscription.chargeType, 'DYNAMIC');
    assert.equal(g.subscription.status, 'ACTIVE');
    assert.ok(nonEmpty(g.subscription.correlationID), 'a generated correlationID');
    const byCorr = await sdk.subscription.get({ id: g.subscription.correlationID });
    assert.equal(byCorr.subscription.globalID, s.globalID);
  });

  it('payment.create (no `type`) -> CREATED; get; list; approve -> APPROVED, then CONFIRMED; the balance pays it once', T, async (t) => {
    if (!need(t, S.accountId, 'account')) return;
    const before = (await sdk.account.get({ id: S.accountId })).account.balance;
    if (before.available < 50) return t.skip(`available balance ${before.available} < 50`);
    const correlationID = `pay-${RUN}`;
    const c = await sdk.payment.create({
      value: 50,
      destinationAlias: `dest-${RUN}@example.com`,
      destinationAliasType: 'EMAIL',
      correlationID,
      comment: 'compat payment',
    });
    assert.equal(c.payment?.correlationID, correlationID);
    assert.equal(c.payment.status, 'CREATED');
    assert.equal(c.payment.value, 50);
    assert.equal(c.payment.destinationAlias, `dest-${RUN}@example.com`);
    const g = await sdk.payment.get({ id: correlationID });
    assert.equal(g.payment.correlationID, correlationID);
    assert.equal(g.transaction, null, 'no transaction before approval');
    assert.equal(g.destination.pixKey, `dest-${RUN}@example.com`, 'destination from the key directory');
    assert.ok(nonEmpty(g.destination.name) && nonEmpty(g.destination.taxID) && nonEmpty(g.destination.bank));
    const l = await sdk.payment.list({ skip: 0, limit: 100 });
    assertPageInfo(l.pageInfo, 'payment.list');
    items(l, 'payments');
    assert.ok(items(l, 'payments').some((p) => (p.payment ?? p).correlationID === correlationID));
    const a = await sdk.payment.approve({ correlationID });
    assert.equal(a.payment?.correlationID, correlationID);
    assert.equal(a.payment.status, 'APPROVED');
    assert.ok(a.transaction && typeof a.transaction === 'object', 'approve returns transaction');
    assert.equal(a.transaction.value, 50);
    assert.ok(a.destination && typeof a.destination === 'object', 'approve returns destination');
    const done = await waitFor(() => sdk.payment.get({ id: correlationID }), (p) => p.payment.status !== 'APPROVED');
    assert.equal(done.payment.status, 'CONFIRMED');
    assert.ok(nonEmpty(done.transaction.endToEndId), 'endToEndId once settled');
    const again = await rejectsWithErrorBody(sdk.payment.approve({ correlationID }), 'approve twice');
    assert.ok(again.error.includes('CONFIRMED'), again.error);
    const after = (await sdk.account.get({ id: S.accountId })).account.balance;
    assert.equal(after.total, before.total - 50, 'paid once');
  });

  it('account.withdraw (SDK path POST /account/{id}) -> {account, transaction}; the WITHDRAW transaction is found by the withdrawal filter', T, async (t) => {
    if (!need(t, S.accountId, 'account')) return;
    const correlationID = `wd-fund-${RUN}`;
    const { charge } = await sdk.charge.create({ correlationID, value: 5000 });
    await sandboxPay({ transactionID: charge.transactionID });
    const before = (await sdk.account.get({ id: S.accountId })).account.balance;
    const res = await sdk.account.withdraw({ accountId: S.accountId, value: 1000 });
    assert.deepEqual(Object.keys(res).sort(), ['account', 'transaction']);
    assert.equal(res.account.accountId, S.accountId);
    assert.equal(res.transaction.value, 1000);
    const fee = res.transaction.fee;
    assert.equal(typeof fee, 'number');
    assert.equal(res.account.balance.total, before.total - 1000 - fee, 'value and fee left');
    const id = nonEmpty(res.transaction.endToEndId) ? res.transaction.endToEndId : res.transaction.withdrawalId;
    const xs = await sdk.transactions.list({ pagination: { skip: 0, limit: 100 }, query: { withdrawal: id } });
    assert.equal(items(xs, 'transactions').length, 1);
    const x = items(xs, 'transactions')[0];
    assert.equal(x.type, 'WITHDRAW');
    assert.equal(x.withdraw?.value, 1000);
    const tooMuch = await rejectsWithErrorBody(sdk.account.withdraw({ accountId: S.accountId, value: 999999999 }), 'withdraw too much');
    assert.ok(tooMuch.error.startsWith('not enough available balance'), tooMuch.error);
  });

  it('subAccount.transfer moves subaccount balance; subAccount.debit moves value to the company account', T, async (t) => {
    if (!need(t, S.subBalance, 'funded subaccount')) return;
    const from = `sub-${RUN}@example.com`;
    const to = `sub2-${RUN}@example.com`;
    await sdk.subAccount.create({ pixKey: to, name: `Sub2 ${RUN}` });
    const tr = await sdk.subAccount.transfer({
      value: 100,
      fromPixKey: from,
      fromPixKeyType: 'EMAIL',
      toPixKey: to,
      toPixKeyType: 'EMAIL',
      correlationID: `subtr-${RUN}`,
    });
    assert.equal(tr.value, 100);
    assert.equal(tr.originSubaccount?.pixKey, from);
    assert.equal(tr.destinationSubaccount?.pixKey, to);
    assert.equal((await sdk.subAccount.get({ id: to })).SubAccount.balance, 100);
    assert.equal((await sdk.subAccount.get({ id: from })).SubAccount.balance, S.subBalance - 100);
    const before = (await sdk.account.get({ id: S.accountId })).account.balance;
    const debit = await sdk.subAccount.debit({ id: from, value: 10, description: 'compat debit' });
    assert.deepEqual(debit, { pixKey: from, value: 10, description: 'compat debit', success: 'Subaccount debited, 10' });
    assert.equal((await sdk.subAccount.get({ id: from })).SubAccount.balance, S.subBalance - 110, 'the subaccount lost 10');
    assert.equal((await sdk.account.get({ id: S.accountId })).account.balance.available, before.available + 10, 'the account got 10');
    const err = await rejectsWithErrorBody(sdk.subAccount.debit({ id: from, value: 0 }), 'debit of 0');
    assert.equal(err.error, 'Value must be positive');
    const none = await rejectsWithErrorBody(sdk.subAccount.debit({ id: `nobody-${RUN}@example.com`, value: 1 }), 'debit of an unknown subaccount');
    assert.equal(none.error, `Subaccount not found: nobody-${RUN}@example.com`);
    const r = await api('POST', `/api/v1/subaccount/${from}/credit`, { body: { value: 10, description: 'compat credit' } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { pixKey: from, value: 10, description: 'compat credit', success: 'Subaccount credited, 10' });
    assert.equal((await sdk.subAccount.get({ id: from })).SubAccount.balance, S.subBalance - 100, '[fetch] credit gave it back');
  });

});

// Last, because it moves the server's clock (one clock for the whole server): tests after it
// would see their charges age.
describe('extra: the webhook event catalogue and the sandbox clock', () => {
  it('[fetch] GET /api/v1/webhook/events lists the events the server produces, {events:[{name}]}', T, async () => {
    const r = await api('GET', '/api/v1/webhook/events');
    assert.equal(r.status, 200, r.text);
    const names = r.body.events.map((e) => e.name);
    for (const name of ['OPENPIX:CHARGE_CREATED', 'OPENPIX:CHARGE_COMPLETED', 'OPENPIX:CHARGE_EXPIRED',
      'OPENPIX:TRANSACTION_RECEIVED', 'PIX_TRANSACTION_REFUND_SENT_CONFIRMED', 'OPENPIX:MOVEMENT_CONFIRMED']) {
      assert.ok(names.includes(name), `${name} in ${names}`);
    }
  });

  it('[fetch] POST /openpix/testing/clock {advance} moves the clock and runs the due pass; backwards is 400', T, async () => {
    const { charge } = await sdk.charge.create({ correlationID: `clock-${RUN}`, value: 100, expiresIn: 900 });
    const before = await api('GET', '/openpix/testing/clock');
    assert.equal(before.status, 200, before.text);
    assert.ok(isIso(before.body.now), before.text);
    const r = await api('POST', '/openpix/testing/clock', { body: { advance: '1h' } });
    assert.equal(r.status, 200, r.text);
    assert.ok(Date.parse(r.body.now) - Date.parse(before.body.now) >= 3600_000, `${before.body.now} -> ${r.body.now}`);
    const { charge: c } = await sdk.charge.get({ id: charge.correlationID });
    assert.equal(c.status, 'EXPIRED', 'a charge past its expiry after the advance');
    const back = await api('POST', '/openpix/testing/clock', { body: { advance: '-1h' } });
    assert.equal(back.status, 400, back.text);
    assert.match(back.body.error, /advance/);
  });
});
