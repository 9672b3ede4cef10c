// The Annotate page's answer keys (Y / N) and their outbox, as an st.components.v2 component.
//
// Why: Streamlit drops a key press or click while its server is unreachable (the widgets are
// disabled, the rerun request is not sent), so an answer given then was lost without a word.
// Here every answer given by key gets an id and the time it was given (on the server's clock), is
// written to this browser's localStorage *before* it is sent, shows as "pending — not saved yet"
// until the server says it stored it (data.acks), and is sent again when the connection is back,
// when the page is opened again, and every few seconds while it waits. The server stores an id once
// and never lets an older answer replace a newer one (AnnotationStore.receive_answer).
//
// data (JSON text): {annotator, sample, run_id, dataset, task, qid, title, assigned: [names],
//   answers: {name: 0|1|null}, focus, server_time, acks: {id: outcome}}.
// State sent: outbox = {answers: [entry...], attempt}; entry = {id, annotator, sample, run_id, dataset,
//   task, qid, title, category (null: "no reason applies"), value, given}.
// Everything shown is set as text (textContent), never as HTML: category names come from an LLM.

const STORE_KEY = "irdash.annotate.outbox";
const RESEND_MS = 5000;
let memory = []; // used where localStorage is unavailable (a private window may refuse it)

function load() {
  try {
    const parsed = JSON.parse(window.localStorage.getItem(STORE_KEY) || "[]");
    return Array.isArray(parsed) ? parsed : [];
  } catch (e) {
    return memory;
  }
}

function save(entries) {
  memory = entries;
  try {
    window.localStorage.setItem(STORE_KEY, JSON.stringify(entries));
  } catch (e) {
    /* kept in memory: still shown pending and sent, lost only if this tab closes */
  }
}

function newId() {
  const bytes = new Uint8Array(16);
  window.crypto.getRandomValues(bytes); // available without a secure context, unlike randomUUID
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function connection() {
  const app = document.querySelector("[data-testid=stApp]");
  return app ? app.getAttribute("data-test-connection-state") : null;
}

const ctx = (window.__irdashAnswerOutbox = window.__irdashAnswerOutbox || {
  current: null, // {data, setStateValue, parentElement, receivedAt, focus}
  attempt: 0,
  lastSent: 0,
  lastConnection: null,
  listening: false,
  timer: null,
});

function send() {
  if (!ctx.current) return;
  const entries = load();
  ctx.attempt += 1;
  ctx.lastSent = performance.now();
  ctx.current.setStateValue("outbox", { answers: entries, attempt: ctx.attempt });
}

function render() {
  if (!ctx.current) return;
  const root = ctx.current.parentElement;
  let box = root.querySelector(".outbox");
  if (!box) {
    box = document.createElement("div");
    box.className = "outbox";
    root.appendChild(box);
  }
  const entries = load();
  box.replaceChildren();
  const offline = connection() !== null && connection() !== "CONNECTED";
  for (const e of entries) {
    const line = document.createElement("div");
    line.className = "pending";
    const what = e.category === null ? "no reason applies" : `${e.category} → ${e.value ? "correct" : "incorrect"}`;
    line.textContent = `Pending — not saved yet: ${e.title}: ${what} (${e.annotator}).` +
      (offline ? " The server is unreachable: the answer is kept in this browser and sent when the server is back." : "");
    box.appendChild(line);
  }
}

function visible(root) {
  const host = root.host || root;
  return typeof host.checkVisibility === "function" ? host.checkVisibility() : true;
}

function onKey(event) {
  const c = ctx.current;
  if (!c || event.repeat || event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key.toLowerCase();
  if (key !== "y" && key !== "n") return;
  const target = event.target;
  if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
  if (!visible(c.parentElement)) return; // another tab of the page is shown
  const d = c.data;
  let category = null;
  if (d.assigned.length) {
    category = d.assigned[c.focus];
  } else if (key !== "n") {
    return; // no assigned reason: only N ("no reason applies") answers
  }
  event.preventDefault();
  const given = d.server_time + (performance.now() - c.receivedAt) / 1000;
  const entry = { id: newId(), annotator: d.annotator, sample: d.sample, run_id: d.run_id, dataset: d.dataset,
                  task: d.task, qid: d.qid, title: d.title, category, value: key === "y", given };
  save([...load(), entry]);
  if (category !== null) { // as the server does: the highlight moves to the next reason not yet marked
    d.answers[category] = key === "y" ? 1 : 0;
    const later = d.assigned.findIndex((name, i) => i > c.focus && d.answers[name] == null);
    if (later >= 0) c.focus = later;
  }
  render();
  send();
}

function tick() {
  const now = connection();
  const back = now === "CONNECTED" && ctx.lastConnection !== null && ctx.lastConnection !== "CONNECTED";
  ctx.lastConnection = now;
  const waiting = load().length > 0;
  if (waiting && (back || (now === "CONNECTED" && performance.now() - ctx.lastSent > RESEND_MS))) send();
  render();
}

export default function (component) {
  const { setStateValue, parentElement } = component;
  const data = typeof component.data === "string" ? JSON.parse(component.data) : component.data;
  const acks = data.acks || {};
  const before = load();
  const left = before.filter((e) => !(e.id in acks));
  if (left.length !== before.length) save(left);
  ctx.current = { data, setStateValue, parentElement, receivedAt: performance.now(), focus: data.focus };
  if (!ctx.listening) {
    document.addEventListener("keydown", onKey);
    ctx.timer = window.setInterval(tick, 1000);
    ctx.listening = true;
  }
  render();
  if (left.length && (ctx.lastSent === 0 || performance.now() - ctx.lastSent > RESEND_MS)) send(); // an earlier visit's
  document.documentElement.dataset.irdashAnswerKeys = "ready"; // the keys are listened to (tests wait for it)
  return () => {
    delete document.documentElement.dataset.irdashAnswerKeys;
    document.removeEventListener("keydown", onKey);
    window.clearInterval(ctx.timer);
    ctx.listening = false;
    ctx.current = null;
  };
}
