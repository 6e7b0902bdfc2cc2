// The payment link page in a real browser: Debian's chromium, driven by playwright-core,
// against examples/server in sandbox mode (run.sh starts it and sets the environment).
//
// It opens the page of a new charge, checks the BR Code text and that the QR image loads and
// decodes (jsqr over pngjs) to that BR Code, writes screenshots at 375 and 1280 px into
// SCREENSHOT_DIR, presses "Simulate payment" and sees the status turn to paid without a
// reload, sees a charge expire when the sandbox clock moves, and sees the not-found page of
// an unknown link; an OVERDUE charge's amount due, a charge deleted while its page is open,
// a static QR code and a large amount at 320 px.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { PNG } from "pngjs";
import jsQR from "jsqr";

const { BASE_URL, APP_ID, CHROMIUM = "/usr/bin/chromium", SCREENSHOT_DIR, USER_DATA_DIR } = process.env;
if (!BASE_URL || !APP_ID || !SCREENSHOT_DIR || !USER_DATA_DIR) {
  throw new Error("run through run.sh: BASE_URL, APP_ID, SCREENSHOT_DIR and USER_DATA_DIR must be set");
}
const WAIT = { timeout: 20_000 }; // the page polls its status every 3 s

// The flags this closed network needs: without the background-networking ones chromium's
// own connections are refused and slow everything down.
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

let context;
before(async () => {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // A persistent context is how playwright takes a fresh --user-data-dir (run.sh makes it).
  context = await chromium.launchPersistentContext(USER_DATA_DIR, {
    executablePath: CHROMIUM, headless: true, args: ARGS,
    viewport: { width: 375, height: 812 },
  });
});
after(async () => { await context?.close(); });

// api calls the server's REST API with the App ID.
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
  const { charge } = await api("POST", "/api/v1/charge", { correlationID: `browser-${Date.now()}-${seq++}`, ...fields });
  return charge;
}

// open opens url in a new page whose browser asks for the languages acceptLanguage.
async function open(url, acceptLanguage = "pt-BR,pt;q=0.9") {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  const userAgent = await page.evaluate(() => navigator.userAgent);
  await cdp.send("Network.setUserAgentOverride", { userAgent, acceptLanguage });
  const res = await page.goto(url);
  return { page, res };
}

const text = (page, sel) => page.locator(sel).innerText();
const shot = (page, name) => page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: true });

// decodeQR reads the PNG at url and returns the text of the QR code in it.
async function decodeQR(url) {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "image/png");
  const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  assert.ok(code, "the image holds a readable QR code");
  return code.data;
}

test("a new charge's page: merchant, value, comment, BR Code, QR image, screenshots", async () => {
  const charge = await newCharge({ value: 123456, comment: "Pedido 42: camiseta azul" });
  assert.equal(charge.paymentLinkUrl, `${BASE_URL}/pay/${charge.paymentLinkID}`); // built by the adapter
  const { page, res } = await open(charge.paymentLinkUrl);
  assert.equal(res.status(), 200);
  assert.equal(await page.locator("html").getAttribute("lang"), "pt-BR");
  const plain = await fetch(charge.paymentLinkUrl); // no Accept-Language at all
  assert.match(await plain.text(), /<html lang="pt-BR">/); // Portuguese by default
  assert.equal(await text(page, "#amount"), "R$ 1.234,56");
  assert.equal(await text(page, "#comment"), "Pedido 42: camiseta azul");
  assert.ok((await text(page, "#merchant")).length > 0);
  assert.equal(await text(page, "#status"), "Aguardando pagamento");
  assert.match(await text(page, "#countdown"), /^23:59:\d\d$/); // 24 h charge, counting down
  assert.equal(await page.locator("#brcode").inputValue(), charge.brCode);
  assert.equal(await page.locator("label[for=brcode]").count(), 1); // the code has a label

  const img = page.locator("#qr");
  await page.waitForFunction(() => document.getElementById("qr").complete, null, WAIT);
  assert.ok(await img.evaluate((el) => el.naturalWidth) > 0, "the QR image loaded");
  assert.ok((await img.getAttribute("alt")).length > 0);
  const src = await img.evaluate((el) => el.src);
  assert.equal(await decodeQR(src), charge.brCode);
  assert.equal(await decodeQR(charge.qrCodeImage), charge.brCode); // the link the API gives

  // Keyboard: tab to the copy button and press Enter.
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE_URL });
  await page.locator("#brcode").focus();
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.id), "copy");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.getElementById("copy-result").textContent !== "", null, WAIT);
  assert.equal(await text(page, "#copy-result"), "Código copiado.");
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), charge.brCode);

  // Nothing wider than a phone's screen.
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), "no horizontal scroll at 375 px");
  await shot(page, "paylink-375.png");
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, "paylink-1280.png");
  await page.close();
});

test("English when the browser asks for it", async () => {
  const charge = await newCharge({ value: 990 });
  const { page } = await open(charge.paymentLinkUrl, "en-US,en;q=0.9,pt;q=0.5");
  assert.equal(await page.locator("html").getAttribute("lang"), "en");
  assert.equal(await text(page, "#status"), "Waiting for payment");
  assert.equal(await text(page, "#simulate"), "Simulate payment");
  assert.equal(await text(page, "#amount"), "R$ 9,90"); // BRL the Brazilian way, in English too
  await shot(page, "paylink-en-375.png");
  await page.close();
});

test("Simulate payment: the status turns to paid without a reload", async () => {
  const charge = await newCharge({ value: 2500 });
  const { page } = await open(charge.paymentLinkUrl);
  await page.evaluate(() => { window.__sameDocument = true; });
  await page.locator("#simulate").click();
  await page.waitForFunction(() => document.getElementById("status").textContent === "Pago", null, WAIT);
  assert.equal(await page.evaluate(() => window.__sameDocument), true); // no reload
  assert.equal(await page.locator("#pay").isVisible(), false); // the code is gone once paid
  assert.equal(await text(page, "#done-note"), "Pagamento recebido. Obrigado!");
  await shot(page, "paylink-paid-375.png");
  const { charge: after } = await api("GET", `/api/v1/charge/${charge.correlationID}`);
  assert.equal(after.status, "COMPLETED"); // it really paid the charge
  await page.close();
});

test("a payment made elsewhere shows up by itself", async () => {
  const charge = await newCharge({ value: 700 });
  const { page } = await open(charge.paymentLinkUrl);
  await page.evaluate(() => { window.__sameDocument = true; });
  await api("GET", `/openpix/testing?transactionID=${charge.transactionID}`); // the sandbox payer, through the API
  await page.waitForFunction(() => document.getElementById("status").textContent === "Pago", null, WAIT);
  assert.equal(await page.evaluate(() => window.__sameDocument), true);
  await page.close();
});

test("an expired charge is shown as expired", async () => {
  const charge = await newCharge({ value: 1500, expiresIn: 900 });
  const { page } = await open(charge.paymentLinkUrl);
  assert.equal(await text(page, "#status"), "Aguardando pagamento");
  await api("POST", "/openpix/testing/clock", { advance: "16m" });
  await page.waitForFunction(() => document.getElementById("status").textContent === "Expirado", null, WAIT);
  assert.equal(await page.locator("#pay").isVisible(), false);
  assert.match(await text(page, "#done-note"), /não aceita mais pagamentos/);
  await page.reload();
  assert.equal(await text(page, "#status"), "Expirado"); // and so it renders
  assert.equal(await page.locator("#simulate").count(), 0); // nothing to simulate
  await shot(page, "paylink-expired-375.png");
  await page.close();
});

test("an unknown link shows the not-found page", async () => {
  const { page, res } = await open(`${BASE_URL}/pay/00000000-0000-4000-8000-000000000000`);
  assert.equal(res.status(), 404);
  assert.match(res.headers()["content-type"], /^text\/html/);
  assert.equal(await text(page, "h1"), "Link de pagamento não encontrado");
  await shot(page, "paylink-notfound-375.png");
  await page.close();
});

test("an OVERDUE charge shows its due date and the amount due today", async () => {
  const charge = await newCharge({
    value: 10000, type: "OVERDUE", daysForDueDate: 1, daysAfterDueDate: 30,
    fines: { value: 200, type: "FIXED" }, interests: { value: 100 },
  });
  await api("POST", "/openpix/testing/clock", { advance: "72h" }); // two days late
  const { charge: now } = await api("GET", `/api/v1/charge/${charge.correlationID}`);
  assert.ok(now.amountDue > now.value, "fine and interest");
  const { page } = await open(charge.paymentLinkUrl);
  const reais = (c) => "R$ " + Math.floor(c / 100).toLocaleString("pt-BR") + "," + String(c % 100).padStart(2, "0");
  // Large: what paying takes today, which the payer types (its BR Code carries no amount);
  // beside it the charge's value.
  assert.equal(await text(page, "#amount"), reais(now.amountDue));
  assert.equal(await text(page, "#original"), reais(now.value));
  assert.ok(await page.locator("#due-date").isVisible());
  await shot(page, "paylink-overdue-375.png");
  await page.locator("#simulate").click();
  await page.waitForFunction(() => document.getElementById("status").textContent === "Pago", null, WAIT);
  assert.equal(await text(page, "#amount"), reais(now.amountDue)); // what was paid
  await page.reload();
  assert.equal(await text(page, "#amount"), reais(now.amountDue)); // and so it renders
  await page.close();
});

test("a charge deleted while its page is open stops being payable there", async () => {
  const charge = await newCharge({ value: 1200 });
  const { page } = await open(charge.paymentLinkUrl);
  await page.locator("#copy").focus();
  await fetch(`${BASE_URL}/api/v1/charge/${charge.correlationID}`, { method: "DELETE", headers: { Authorization: APP_ID } });
  await page.waitForFunction(() => document.getElementById("status").textContent === "Link de pagamento não encontrado", null, WAIT);
  assert.equal(await page.locator("#pay").isVisible(), false); // no code left to pay
  assert.equal(await page.locator("#simulate").isVisible(), false);
  assert.equal(await page.evaluate(() => document.activeElement.id), "status"); // focus not lost with the hidden button
  await page.close();
});

test("a static QR code: no self-update claim, and simulating says it worked", async () => {
  const res = await fetch(`${BASE_URL}/api/v1/qrcode-static`, {
    method: "POST", headers: { Authorization: APP_ID, "Content-Type": "application/json" },
    body: JSON.stringify({ name: `qr-${Date.now()}`, value: 1500 }),
  });
  const { pixQrCode } = await res.json();
  const { page } = await open(pixQrCode.paymentLinkUrl);
  assert.equal(await page.locator("#footer").count(), 0); // it never updates itself
  await page.locator("#simulate").click();
  await page.waitForFunction(() => document.getElementById("simulate-result").textContent === "Pagamento simulado.", null, WAIT);
  await page.close();
});

test("a large amount fits a 320 px screen", async () => {
  const charge = await newCharge({ value: 999999999999 });
  const { page } = await open(charge.paymentLinkUrl);
  await page.setViewportSize({ width: 320, height: 700 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 320), "no horizontal scroll at 320 px");
  await shot(page, "paylink-large-320.png");
  await page.close();
});
