// The payment link page under a path prefix, in a real browser (issue 30): a host at its
// own origin serves its own home page at / and the adapter under /payments/, forwarding
// /payments/... to the server run.sh started with the prefix stripped, as
// http.StripPrefix("/payments", api) on a host's mux or a proxy does. The browser sees only
// the host. The page's QR image, its live status and its simulate button must all work
// there, every request the page makes must stay under /payments/ and succeed, and the page's
// Content-Security-Policy must block nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { chromium } from "playwright-core";
import { PNG } from "pngjs";
import jsQR from "jsqr";

const { BASE_URL, APP_ID, CHROMIUM = "/usr/bin/chromium", USER_DATA_DIR } = process.env;
if (!BASE_URL || !APP_ID || !USER_DATA_DIR) {
  throw new Error("run through run.sh: BASE_URL, APP_ID and USER_DATA_DIR must be set");
}
const WAIT = { timeout: 20_000 }; // the page polls its status every 3 s
const PREFIX = "/payments";
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

// host is the embedding program: its own "/" and the adapter under PREFIX. It forwards the
// browser's Host, so the server sees the page's origin as its own (simulate checks Origin).
const upstream = new URL(BASE_URL);
const host = http.createServer((req, res) => {
  if (req.url === "/") {
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end("the host's home");
    return;
  }
  if (!req.url.startsWith(PREFIX + "/")) {
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("not one of the host's routes");
    return;
  }
  const up = http.request({
    host: upstream.hostname, port: upstream.port, method: req.method,
    path: req.url.slice(PREFIX.length), headers: req.headers,
  }, (ur) => { res.writeHead(ur.statusCode, ur.headers); ur.pipe(res); });
  up.on("error", (err) => { res.writeHead(502, { "Content-Type": "text/plain" }); res.end(String(err)); });
  req.pipe(up);
});

let context, HOST_URL;
before(async () => {
  await new Promise((resolve) => host.listen(0, "127.0.0.1", resolve));
  HOST_URL = `http://127.0.0.1:${host.address().port}`;
  context = await chromium.launchPersistentContext(USER_DATA_DIR + "-mount", {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 375, height: 812 },
    locale: "pt-BR", // the page in Portuguese, as for most payers
  });
});
after(async () => {
  await context?.close();
  host.close();
});

async function api(method, route, body) {
  const res = await fetch(BASE_URL + route, {
    method, headers: { Authorization: APP_ID, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  assert.equal(res.status, 200, `${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

let seq = 0;
async function newCharge(fields) {
  const { charge } = await api("POST", "/api/v1/charge", { correlationID: `mount-${Date.now()}-${seq++}`, ...fields });
  return charge;
}

// openMounted opens the charge's page through the host, and records every request the page
// makes (with its answer's status) and every console error (a CSP violation is one).
async function openMounted(charge) {
  const page = await context.newPage();
  const requests = [];
  const errors = [];
  // The browser's own favicon request goes to the host's root, whatever the page says.
  const own = (url) => new URL(url).pathname !== "/favicon.ico";
  page.on("response", (res) => { if (own(res.url())) requests.push({ url: res.url(), status: res.status() }); });
  page.on("requestfailed", (req) => { if (own(req.url())) requests.push({ url: req.url(), status: 0 }); });
  page.on("console", (msg) => {
    if (msg.type() === "error" && !(msg.location().url && !own(msg.location().url))) errors.push(msg.text());
  });
  page.on("pageerror", (err) => errors.push(String(err)));
  const res = await page.goto(`${HOST_URL}${PREFIX}/pay/${charge.paymentLinkID}`);
  assert.equal(res.status(), 200);
  return { page, requests, errors };
}

// checkRequests: every request stayed under the prefix on the host and was answered 200.
function checkRequests(requests, errors) {
  assert.ok(requests.length > 0);
  for (const r of requests) {
    assert.ok(r.url.startsWith(`${HOST_URL}${PREFIX}/`), `${r.url} is under ${PREFIX}/`);
    assert.equal(r.status, 200, r.url);
  }
  assert.deepEqual(errors, []);
}

async function decodeQR(url) {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  assert.ok(code, "the image holds a readable QR code");
  return code.data;
}

test("mounted under a prefix: the host's own route is the host's", async () => {
  const res = await fetch(`${HOST_URL}/`);
  assert.equal(await res.text(), "the host's home");
  const charge = await newCharge({ value: 100 });
  assert.equal((await fetch(`${HOST_URL}/pay/${charge.paymentLinkID}`)).status, 404); // only under the prefix
});

test("mounted under a prefix: QR image, simulate, no reload", async () => {
  const charge = await newCharge({ value: 2500 });
  const { page, requests, errors } = await openMounted(charge);
  await page.evaluate(() => { window.__sameDocument = true; });
  assert.equal(await page.locator("#status").innerText(), "Aguardando pagamento");
  await page.waitForFunction(() => document.getElementById("qr").complete, null, WAIT);
  assert.ok(await page.locator("#qr").evaluate((el) => el.naturalWidth) > 0, "the QR image loaded");
  const src = await page.locator("#qr").evaluate((el) => el.src);
  assert.ok(src.startsWith(`${HOST_URL}${PREFIX}/`), src);
  assert.equal(await decodeQR(src), charge.brCode);

  await page.locator("#simulate").click();
  await page.waitForFunction(() => document.getElementById("status").textContent === "Pago", null, WAIT);
  assert.equal(await page.evaluate(() => window.__sameDocument), true);
  assert.ok(requests.some((r) => r.url.endsWith("/simulate")), "the button posted through the prefix");
  checkRequests(requests, errors);
  const { charge: after } = await api("GET", `/api/v1/charge/${charge.correlationID}`);
  assert.equal(after.status, "COMPLETED"); // it really paid the charge
  await page.close();
});

test("mounted under a prefix: the live status shows a payment made elsewhere", async () => {
  const charge = await newCharge({ value: 700 });
  const { page, requests, errors } = await openMounted(charge);
  await page.evaluate(() => { window.__sameDocument = true; });
  await api("GET", `/openpix/testing?transactionID=${charge.transactionID}`); // the sandbox payer
  await page.waitForFunction(() => document.getElementById("status").textContent === "Pago", null, WAIT);
  assert.equal(await page.evaluate(() => window.__sameDocument), true);
  assert.ok(requests.some((r) => r.url.endsWith("/status")), "the page polled its status through the prefix");
  checkRequests(requests, errors);
  await page.close();
});
