// The payment link page: copy the BR Code, count the time left down, follow the status
// (polling the public status route) and, in the sandbox, simulate the payment.
(function () {
  "use strict";
  var root = document.getElementById("paylink");
  if (!root) return;
  var d = root.dataset;
  var status = d.status;
  var $ = function (id) { return document.getElementById(id); };

  // Copy and paste.
  var copy = $("copy"), code = $("brcode"), copyResult = $("copy-result");
  copy.addEventListener("click", function () {
    var done = function () { copyResult.textContent = d.textCopied; };
    var fallback = function () {
      code.focus();
      code.select();
      try { document.execCommand("copy") ? done() : fail(); } catch (e) { fail(); }
    };
    var fail = function () { copyResult.textContent = d.textCopyFailed; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(code.value).then(done, fallback);
    } else {
      fallback();
    }
  });
  code.addEventListener("focus", function () { code.select(); });

  // Time left, counted from the server's own clock (expiresIn seconds at the last read).
  var left = d.expiresIn === "" ? null : Number(d.expiresIn);
  var readAt = Date.now();
  var countdown = $("countdown");
  var pad = function (n) { return (n < 10 ? "0" : "") + n; };
  function tick() {
    if (left === null || !countdown || status !== "WAITING") return;
    var s = Math.max(0, Math.floor(left - (Date.now() - readAt) / 1000));
    var days = Math.floor(s / 86400), rest = s % 86400;
    var hms = pad(Math.floor(rest / 3600)) + ":" + pad(Math.floor(rest / 60) % 60) + ":" + pad(rest % 60);
    countdown.textContent = (days > 0 ? days + " " + d.textDays + " " : "") + hms;
    countdown.setAttribute("datetime", "PT" + s + "S");
    if (s === 0) poll();
  }

  // Status.
  // GONE: the link was deleted (the charge cancelled) while the page was open.
  var texts = { WAITING: d.textWaiting, PAID: d.textPaid, EXPIRED: d.textExpired, GONE: d.textGone };
  function show(st) {
    status = st.status;
    var el = $("status");
    if (el.textContent !== texts[status]) el.textContent = texts[status];
    el.className = "status status-" + (status === "GONE" ? "expired" : status.toLowerCase());
    root.dataset.status = status;
    var waiting = status === "WAITING";
    var focused = document.activeElement;
    ["pay", "sandbox", "time-left", "footer"].forEach(function (id) {
      var e = $(id);
      if (e) e.hidden = !waiting;
    });
    if (focused && focused !== document.body && !focused.offsetParent) el.focus(); // its section was hidden
    var note = $("done-note"), noteText = { PAID: d.notePaid, EXPIRED: d.noteExpired, GONE: d.noteGone }[status] || "";
    if (note.textContent !== noteText) note.textContent = noteText;
    note.hidden = noteText === "";
    if (typeof st.expiresIn === "number") { left = st.expiresIn; readAt = Date.now(); }
    if (d.kind === "CHARGE" && st.amountDueText) {
      $("amount").textContent = st.amountDueText; // what paying takes now, or what was paid
      var original = $("original-row");
      if (original) original.hidden = $("original").textContent === st.amountDueText;
    }
    tick();
  }
  var polling = false;
  function poll() {
    if (polling || status !== "WAITING") return;
    polling = true;
    fetch(d.statusUrl, { cache: "no-store", headers: { Accept: "application/json" } })
      .then(function (r) {
        if (r.status === 404) return { status: "GONE" }; // deleted meanwhile: nothing to pay
        return r.ok ? r.json() : null;
      })
      .then(function (st) { if (st) show(st); })
      .catch(function () {})
      .then(function () { polling = false; });
  }
  if (d.kind === "CHARGE") {
    setInterval(tick, 1000);
    setInterval(poll, 3000);
    document.addEventListener("visibilitychange", function () { if (!document.hidden) poll(); });
  }

  // Sandbox: pay this link through the sandbox-only route.
  var simulate = $("simulate");
  if (simulate && d.simulateUrl) {
    simulate.addEventListener("click", function () {
      var result = $("simulate-result");
      simulate.disabled = true;
      result.textContent = d.textSimulating;
      fetch(d.simulateUrl, { method: "POST", headers: { Accept: "application/json" } })
        .then(function (r) {
          return r.json().then(function (body) {
            if (r.status === 404) { show({ status: "GONE" }); result.textContent = ""; return; }
            if (!r.ok) throw new Error(body && body.error ? body.error : String(r.status));
            result.textContent = d.kind === "CHARGE" ? "" : d.textSimulated; // a QR code stays payable: say it worked
            show(body);
          });
        })
        .catch(function (e) { result.textContent = d.textSimulateFailed + " " + e.message; })
        .then(function () { simulate.disabled = false; });
    });
  }
})();
