// CORS in a real browser: a shop's page on one origin calls the API on another with fetch
// and the App ID, as @openpix/react does (Accept, Content-Type: application/json,
// Authorization), so Chromium sends a preflight first. The page creates a charge, pays it
// through the sandbox's /openpix/testing and reads it back COMPLETED.
//
// The page is served by a small HTTP server of this test (127.0.0.1, a port of its own: an
// origin other than the API's). The API servers are examples/server binaries (SERVER_BIN,
// the one run.sh built) that this test starts on memory: databases with -cors-origins: the
// page's origin among others, and *; the same script works there. With run.sh's server
// (BASE_URL, APP_ID: no -cors-origins) and with a server configured for another origin
// only, Chromium blocks the call: the script's fetch fails, and the charge was never
// created.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { once } from "node:events";
import { chromium } from "playwright-core";

const { BASE_URL, APP_ID, SERVER_BIN, CHROMIUM = "/usr/bin/chromium", USER_DATA_DIR } = process.env;
if (!BASE_URL || !APP_ID || !SERVER_BIN || !USER_DATA_DIR) {
  throw new Error("run through run.sh: BASE_URL, APP_ID, SERVER_BIN and USER_DATA_DIR must be set");
}
const STARTUP = 30_000; // ms for a server to print its App ID and listen

// As in paylink.test.mjs: what this closed network needs.
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

// PAGE is the shop's page. payFlow does what a checkout built on @openpix/react does, with
// its headers, and reports each reply's status, body and the X-Request-Id the page could
// read (null unless the server exposes it).
const PAGE = `<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>Loja</title></head>
<body><h1>Loja</h1>
<script>
async function call(api, appID, method, path, body) {
  const res = await fetch(api + path, {
    method,
    headers: { Accept: "application/json", "Content-Type": "application/json", Authorization: appID },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, requestID: res.headers.get("X-Request-Id"), body: await res.json() };
}
window.payFlow = async (api, appID, correlationID) => {
  const created = await call(api, appID, "POST", "/api/openpix/v1/charge", { correlationID, value: 1990, comment: "Pedido 7" });
  const paid = await call(api, appID, "GET", "/openpix/testing?transactionID=" + encodeURIComponent(created.body.charge.transactionID));
  const charge = await call(api, appID, "GET", "/api/openpix/v1/charge/" + encodeURIComponent(correlationID));
  return { created, paid, charge };
};
</script></body></html>`;

let pageServer, pageOrigin, context;
const servers = [];

before(async () => {
  pageServer = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(PAGE);
  });
  pageServer.listen(0, "127.0.0.1");
  await once(pageServer, "listening");
  pageOrigin = `http://127.0.0.1:${pageServer.address().port}`;
  context = await chromium.launchPersistentContext(USER_DATA_DIR + "-cors", {
    executablePath: CHROMIUM, headless: true, args: ARGS,
  });
});

after(async () => {
  await context?.close();
  pageServer?.close();
  await Promise.all(servers.map(async (p) => {
    if (p.exitCode === null && p.signalCode === null) {
      p.kill("SIGTERM");
      await once(p, "exit");
    }
  }));
});

// startServer starts examples/server in the sandbox on a memory: database with extra
// flags, and returns its base URL and App ID once it listens.
async function startServer(...flags) {
  const p = spawn(SERVER_BIN, ["-addr", "127.0.0.1:0", "-db", "memory:", "-sandbox=true", "-request-log=true", ...flags],
    { stdio: ["ignore", "pipe", "pipe"] });
  servers.push(p);
  let out = "", err = "";
  p.stdout.setEncoding("utf8").on("data", (s) => { out += s; });
  p.stderr.setEncoding("utf8").on("data", (s) => { err += s; });
  const deadline = Date.now() + STARTUP;
  for (;;) {
    const appID = out.match(/App ID: (\S+)/)?.[1];
    const addr = err.match(/msg=listening addr=(\S+)/)?.[1];
    if (appID && addr) return { base: `http://${addr}`, appID };
    if (p.exitCode !== null || Date.now() > deadline) {
      throw new Error(`server ${flags.join(" ")} did not start (exit ${p.exitCode}):\n${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

// shop opens the shop's page and runs payFlow against api; it returns {ok, result} or
// {ok: false, error} with what the browser logged.
async function shop(api, appID, correlationID) {
  const page = await context.newPage();
  const logged = [];
  page.on("console", (m) => logged.push(m.text()));
  await page.goto(pageOrigin + "/");
  const out = await page.evaluate(
    ([api, appID, id]) => window.payFlow(api, appID, id).then((result) => ({ ok: true, result }), (e) => ({ ok: false, error: String(e) })),
    [api, appID, correlationID],
  );
  await page.close();
  return { ...out, logged };
}

// works checks that the page created a charge, paid it and read it back COMPLETED.
function works(out) {
  assert.ok(out.ok, `the page's fetch failed: ${out.error}\n${out.logged.join("\n")}`);
  const { created, paid, charge } = out.result;
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal(created.body.charge.status, "ACTIVE");
  assert.ok(created.requestID, "the page reads X-Request-Id (exposed)");
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  assert.equal(charge.status, 200, JSON.stringify(charge.body));
  assert.equal(charge.body.charge.status, "COMPLETED");
}

// blocked checks that the browser refused the page's first call: its fetch failed, Chromium
// said why on the page's console, and the charge does not exist (asked from here, where no
// browser is in the way).
async function blocked(out, api, appID, correlationID) {
  assert.equal(out.ok, false, "the browser let the page call the API");
  assert.match(out.error, /TypeError: Failed to fetch/);
  assert.ok(out.logged.some((m) => m.includes(`from origin '${pageOrigin}' has been blocked by CORS policy`)), out.logged.join("\n"));
  const res = await fetch(`${api}/api/v1/charge/${correlationID}`, { headers: { Authorization: appID } });
  const body = await res.json();
  assert.equal(res.status, 400, JSON.stringify(body)); // the real API's "not found"
  assert.match(body.error, /not found/i, "the POST was never sent");
}

test("the page's origin configured: it creates a charge, pays it in the sandbox and sees it COMPLETED", async () => {
  const api = await startServer("-cors-origins", `https://other.example,${pageOrigin}`);
  works(await shop(api.base, api.appID, `cors-${Date.now()}`));
});

test("-cors-origins '*': any page may", async () => {
  const api = await startServer("-cors-origins", "*");
  works(await shop(api.base, api.appID, `cors-any-${Date.now()}`));
});

test("no -cors-origins: the browser blocks the page's call", async () => {
  const id = `cors-none-${Date.now()}`;
  await blocked(await shop(BASE_URL, APP_ID, id), BASE_URL, APP_ID, id);
});

test("another origin configured: the browser blocks the page's call", async () => {
  const api = await startServer("-cors-origins", "https://other.example");
  const id = `cors-other-${Date.now()}`;
  await blocked(await shop(api.base, api.appID, id), api.base, api.appID, id);
});
