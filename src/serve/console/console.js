// The console's live parts (no build step, no framework). The page
// listens to /console/changes and, at each change, reads itself again
// and swaps its [data-live] parts; countdowns ([data-deadline-at]) tick
// every second on the server's clock, and when one runs out the page is
// read again, so a status reached by time alone shows without a reload.
"use strict";
(() => {
  const body = document.body;
  // The server's clock against the browser's (DISCUSS_NOW, skew).
  let offset = Number(body.dataset.now) - Date.now();
  const now = () => Date.now() + offset;
  const signal = document.getElementById("signal");
  const say = (text, state) => {
    if (!signal) return;
    signal.textContent = text;
    signal.dataset.state = state;
  };

  const span = (ms) => {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
    return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
  };

  let reading = null;
  let again = false;
  // Reads the page again and swaps what changed; one read at a time, and
  // one more when changes came meanwhile.
  const refresh = async () => {
    if (reading) { again = true; return; }
    reading = (async () => {
      try {
        const answer = await fetch(location.href, { cache: "no-store", credentials: "same-origin" });
        if (answer.redirected && new URL(answer.url).pathname === "/login") {
          location.assign("/login");
          return;
        }
        if (!answer.ok) return;
        const fresh = new DOMParser().parseFromString(await answer.text(), "text/html");
        const focused = document.activeElement && document.activeElement.closest("[data-live]")
          ? document.activeElement.getAttribute("aria-label") || document.activeElement.name : null;
        // A part someone is typing in (a denial's reason) is left as it
        // is until they send it or clear it.
        const typing = (part) => [...part.querySelectorAll("input:not([type=hidden]), textarea")]
          .some((e) => e === document.activeElement || e.value !== e.defaultValue);
        for (const part of document.querySelectorAll("[data-live][id]")) {
          const next = fresh.getElementById(part.id);
          if (next && next.innerHTML !== part.innerHTML && !typing(part)) {
            part.replaceWith(document.importNode(next, true));
          }
        }
        const main = document.querySelector("main");
        const freshMain = fresh.querySelector("main");
        if (main && freshMain) {
          for (const name of ["status"]) {
            if (freshMain.dataset[name] !== undefined) main.dataset[name] = freshMain.dataset[name];
          }
        }
        if (fresh.body && fresh.body.dataset.now) {
          offset = Number(fresh.body.dataset.now) - Date.now();
        }
        if (focused) {
          const back = [...document.querySelectorAll("[data-live] button, [data-live] a")]
            .find((e) => (e.getAttribute("aria-label") || e.name) === focused);
          if (back) back.focus();
        }
        tick();
      } catch (_) {
        // The server is away: the stream's reconnection says so.
      } finally {
        reading = null;
        if (again) { again = false; refresh(); }
      }
    })();
  };

  // Countdowns; a run-out one asks for the page again once.
  const due = new Set();
  const tick = () => {
    for (const el of document.querySelectorAll("[data-deadline-at]")) {
      const at = Date.parse(el.dataset.deadlineAt);
      if (Number.isNaN(at)) continue;
      const left = at - now();
      el.textContent = left > 0 ? `${span(left)} left` : "due";
      if (left <= 0 && !due.has(el.dataset.deadlineAt)) {
        due.add(el.dataset.deadlineAt);
        // The derived status is read a moment after the deadline.
        setTimeout(refresh, 300);
      }
    }
  };
  tick();
  setInterval(tick, 1000);

  const listen = () => {
    const changes = new EventSource("/console/changes");
    changes.onopen = () => say("live", "live");
    changes.addEventListener("changed", () => refresh());
    changes.addEventListener("signed-out", () => {
      changes.close();
      location.assign("/login");
    });
    changes.onerror = () => {
      say("reconnecting", "away");
      // EventSource comes back by itself (retry: 1000); the page is read
      // again when it does, for what happened while it was away.
      changes.addEventListener("open", () => refresh(), { once: true });
    };
  };
  listen();
})();
