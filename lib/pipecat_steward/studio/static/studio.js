// steward studio: renders one session's events (live over a WebSocket, or replayed step by step).
"use strict";
const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
};
const show = (value) => (value === null || value === undefined ? "—" : typeof value === "object" ? JSON.stringify(value) : String(value));

const studio = { config: {}, agent: { steps: [], slots: [] }, events: [], cursor: 0, socket: null, timer: null };

function blank() {
  return { transcript: [], log: [], slots: {}, order: [], steps: {}, titles: {}, args: {}, current: null, violation: null, slm: { calls: 0, ms: 0, cost: 0 }, changed: null, phase: null, started: null, ended: null };
}

// Fold one event (the conversation event schema, by `kind`) into the view state.
const SETTLED = ["filled", "confirmed", "inferred"];
function apply(state, ev) {
  state.changed = null;
  switch (ev.kind) {
    case "caller_transcript": state.transcript.push({ who: "caller", text: ev.text, turn: ev.turn }); break;
    case "bot_utterance": state.transcript.push({ who: "bot", text: ev.text, source: ev.source || "llm", turn: ev.turn }); break;
    case "slot_change": {
      if (!(ev.slot in state.slots)) state.order.push(ev.slot);
      const before = state.slots[ev.slot];
      const replaced = before && SETTLED.includes(before.status) && before.value !== null &&
        JSON.stringify(before.value) !== JSON.stringify(ev.value);
      const slot = { ...ev, corrected: replaced || (before && before.corrected), previous: replaced ? before.value : before && before.previous };
      state.slots[ev.slot] = slot;
      state.changed = ev.slot;
      if (replaced) state.log.push({ ...ev, kind: "slot_correction", previous: before.value });
      break;
    }
    case "checklist":
      (ev.steps || []).forEach((s) => { state.steps[s.id] = s.state; if (s.title) state.titles[s.id] = s.title; });
      state.current = ev.current_step || null;
      if (ev.last_violation) state.violation = ev.last_violation;
      break;
    case "monitor_check":
      state.slm.calls += 1;
      state.slm.ms += ev.latency_ms || 0;
      state.slm.cost += ev.cost_usd || 0;
      state.log.push(ev);
      break;
    case "call_started": state.started = ev; break;
    case "call_ended": state.ended = ev; break;
    case "engine_decision": state.phase = ev.phase; break;
    case "debug": case "turn_ended": break; // in the raw events, not the log
    case "tool_call": state.args[ev.call_id || ev.name] = ev.args; break;
    case "tool_result": state.log.push({ ...ev, args: state.args[ev.call_id || ev.name] }); break;
    default: state.log.push(ev);
  }
}

function render(state) {
  renderTranscript(state);
  renderChecklist(state);
  renderSlots(state);
  renderLog(state);
  highlightPicture(state);
  const s = state.slm;
  $("slm-total").textContent = s.calls ? `· logic_slm ${s.calls} call${s.calls > 1 ? "s" : ""}` +
    (s.ms ? `, ${Math.round(s.ms)} ms` : "") + (s.cost ? `, $${s.cost.toFixed(5)}` : "") : "";
}

function renderTranscript(state) {
  const list = $("transcript");
  list.replaceChildren(...state.transcript.map((u) => {
    const item = el("li", `bubble ${u.who}`);
    const who = el("span", "who", u.who === "caller" ? "caller" : "bot");
    if (u.who === "bot") who.append(el("span", `src ${u.source}`, u.source));
    item.dataset.source = u.source || "caller";
    item.append(who, el("span", "text", u.text));
    return item;
  }));
  list.scrollTop = list.scrollHeight;
}

function stepTitle(id, state) {
  const step = studio.agent.steps.find((s) => s.id === id);
  return step ? step.title : (state && state.titles[id]) || id;
}

function renderChecklist(state) {
  const known = studio.agent.steps.map((s) => s.id);
  const ids = [...known, ...Object.keys(state.steps).filter((id) => !known.includes(id))];
  const marks = { done: "✓", open: "", not_applicable: "–", blocked: "!" };
  $("checklist").replaceChildren(...ids.map((id) => {
    const st = state.steps[id] || "open";
    const item = el("li", id === state.current ? "current" : "");
    item.dataset.step = id;
    item.dataset.state = st;
    item.append(el("span", "mark", marks[st] ?? ""), el("span", "title", stepTitle(id, state)));
    const step = studio.agent.steps.find((s) => s.id === id);
    if (step && step.irreversible) item.append(el("span", "irrev", "irreversible"));
    item.append(el("span", "state-label", st.replace("_", " ")));
    return item;
  }));
  $("current").textContent = state.current ? `· now: ${stepTitle(state.current)}` : "";
  const v = $("violation");
  v.hidden = !state.violation;
  v.textContent = state.violation ? `last violation: ${typeof state.violation === "string" ? state.violation : show(state.violation.detail || state.violation)}` : "";
}

function renderSlots(state) {
  const names = [...studio.agent.slots.map((s) => s.name)];
  state.order.forEach((n) => { if (!names.includes(n)) names.push(n); });
  $("slots").replaceChildren(...names.map((name) => {
    const slot = state.slots[name] || { status: "empty" };
    const row = el("tr", slot.status === "empty" ? "empty" : "");
    if (state.changed === name) row.classList.add("changed");
    row.dataset.slot = name;
    row.dataset.status = slot.status;
    row.dataset.corrected = slot.corrected ? "true" : "false";
    const settled = { filled: "confirmed", confirmed: "confirmed", inferred: "pending", pending: "pending" }[slot.status] || slot.status;
    const value = el("td", "value", show(slot.value));
    if (slot.corrected) value.append(el("span", "was", `corrected · was ${show(slot.previous)}`));
    row.append(el("td", "", name), tdStatus(slot.status, settled), value, el("td", "muted", slot.source || ""));
    return row;
  }));
}

function tdStatus(status, label) {
  const cell = el("td");
  const chip = el("span", `status ${status}`, status === label ? status : `${status} · ${label}`);
  chip.title = label === "confirmed" ? "settled: the caller's answer stands" : label === "pending" ? "awaiting the caller's confirmation" : status;
  cell.append(chip);
  return cell;
}

const money = (usd) => `$${Number(usd).toFixed(usd < 0.01 ? 5 : 2)}`;
function summary(ev) {
  switch (ev.kind) {
    case "gate": return [ev.decision === "veto" ? "veto" : "allow", `${ev.decision === "veto" ? "vetoed" : "allowed"} ${ev.tool}` + (ev.reason ? ` — ${ev.reason}` : "") + (ev.open_steps && ev.open_steps.length ? ` (open: ${ev.open_steps.join(", ")})` : "")];
    case "tool_result": return [`tool ${ev.outcome}`, `${ev.by === "engine" ? "engine ran" : "LLM called"} ${ev.name} → ${ev.outcome}` + (ev.reason && ev.reason !== ev.outcome ? ` (${ev.reason})` : "")];
    case "correction": return ["correction", `monitor correction ${ev.status}` + (ev.step ? ` on ${ev.step}` : "") + (ev.severity ? ` (${ev.severity})` : "") + (ev.text ? `: ${ev.text}` : "") + (ev.reason ? ` — ${ev.reason}` : "")];
    case "monitor_check": return ["slm", `logic_slm ${ev.purpose}` + (ev.latency_ms !== null && ev.latency_ms !== undefined ? ` · ${Math.round(ev.latency_ms)} ms` : "") + (ev.cost_usd ? ` · ${money(ev.cost_usd)}` : "") + (ev.verdict && ev.verdict !== "ok" ? ` · ${ev.verdict}` : "")];
    case "slot_correction": return ["correction", `${ev.slot} corrected: ${show(ev.previous)} → ${show(ev.value)}`];
    case "transaction": return ["transaction", `transaction ${ev.name || ""} ${ev.status}`];
    case "checkpoint": return ["checkpoint", `checkpoint ${ev.action}` + (ev.version ? ` v${ev.version}` : "")];
    case "payload": return ["payload", `sent ${ev.part && (ev.part.component || ev.part.type) || "a rich part"} to the client`];
    default: return [ev.kind, ev.text || ev.reason || ""];
  }
}

function renderLog(state) {
  const list = $("log");
  list.replaceChildren(...state.log.map((ev) => {
    const [kind, text] = summary(ev);
    const item = el("li", `entry ${ev.kind === "tool_result" ? "tool " + ev.outcome : kind.split(" ")[0]}`);
    item.dataset.kind = ev.kind;
    if (ev.decision) item.dataset.decision = ev.decision;
    const details = el("details");
    const head = el("summary");
    head.append(el("span", "kind", ev.kind.replace("_", " ")), el("span", "", text));
    if (ev.turn) head.append(el("span", "turn", `turn ${ev.turn}`));
    details.append(head, el("pre", "", JSON.stringify(ev, null, 2)));
    item.append(details);
    return item;
  }));
  list.scrollTop = list.scrollHeight;
}

function highlightPicture(state) {
  document.querySelectorAll("#picture g.node").forEach((node) => {
    const title = node.querySelector("title");
    const name = title ? title.textContent : "";
    const id = name.startsWith("step_") ? name.slice(5) : null;
    node.classList.toggle("current", id !== null && id === state.current);
    node.classList.toggle("done", id !== null && state.steps[id] === "done");
  });
}

// Replay: the state after the first `cursor` events.
function showUpTo(cursor) {
  studio.cursor = Math.max(0, Math.min(cursor, studio.events.length));
  const state = blank();
  studio.events.slice(0, studio.cursor).forEach((ev) => apply(state, ev));
  render(state);
  $("position").textContent = `${studio.cursor} / ${studio.events.length}`;
  document.body.dataset.cursor = String(studio.cursor);
}

function play() {
  if (studio.timer) { clearInterval(studio.timer); studio.timer = null; $("play").textContent = "▶"; return; }
  $("play").textContent = "❚❚";
  studio.timer = setInterval(() => {
    if (studio.cursor >= studio.events.length) return play();
    showUpTo(studio.cursor + 1);
  }, 600);
}

async function openReplay(session) {
  const reply = await fetch(`api/sessions/${encodeURIComponent(session)}/events`);
  studio.events = reply.ok ? await reply.json() : [];
  $("player").hidden = false;
  showUpTo(0);
  $("status").textContent = `replay · ${studio.events.length} events`;
}

function openLive(session) {
  const state = blank();
  render(state);
  const url = new URL(`ws/${encodeURIComponent(session)}`, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(url);
  studio.socket = socket;
  socket.onmessage = (msg) => {
    const ev = JSON.parse(msg.data);
    studio.events.push(ev);
    apply(state, ev);
    render(state);
    document.body.dataset.events = String(studio.events.length);
  };
  socket.onopen = () => { $("status").textContent = "live"; };
  socket.onclose = () => { $("status").textContent = "ended"; };
}

async function open(session, live) {
  if (studio.socket) studio.socket.close();
  if (studio.timer) play();
  studio.events = [];
  if (!session) { render(blank()); return; }
  if (live) openLive(session); else await openReplay(session);
}

async function loadSessions() {
  const list = await (await fetch("api/sessions")).json();
  const select = $("sessions");
  select.replaceChildren(...list.map((s) => {
    const opt = el("option", "", `${s.id}${s.live ? " · live" : ""} (${s.events})`);
    opt.value = s.id;
    opt.dataset.live = s.live ? "1" : "";
    return opt;
  }));
  return list;
}

// Voice: each connection is a new call; follow the newest live one when it appears.
async function followNewest() {
  const shown = $("sessions").value;
  const list = await loadSessions();
  const newest = list.find((s) => s.live);
  if (newest && newest.id !== studio.following) {
    studio.following = newest.id;
    $("sessions").value = newest.id;
    await open(newest.id, true);
  } else if (shown) $("sessions").value = shown;
}

async function loadPicture() {
  const reply = await fetch("api/picture");
  const box = $("picture");
  if ((reply.headers.get("content-type") || "").includes("svg")) box.innerHTML = await reply.text();
  else box.replaceChildren(el("pre", "", await reply.text()));
}

async function say(event) {
  event.preventDefault();
  const input = $("line");
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  input.disabled = true;
  try {
    const reply = await fetch("api/say", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text }) });
    if (!reply.ok) $("status").textContent = `not answered: ${(await reply.json()).detail || reply.status}`;
  } finally {
    input.disabled = false;
    input.focus();
    document.body.dataset.said = String(Number(document.body.dataset.said || 0) + 1);
  }
}

async function main() {
  studio.config = await (await fetch("api/config")).json();
  studio.agent = await (await fetch("api/agent")).json();
  const { mode, session, voice_client } = studio.config;
  $("agent-name").textContent = studio.agent.name;
  $("mode").textContent = mode;
  document.title = `${studio.agent.name} · steward studio`;
  await loadPicture();
  const list = await loadSessions();
  if (session) $("sessions").value = session;
  if (mode === "text") { $("say").hidden = false; $("say").onsubmit = say; }
  if (mode === "voice" && voice_client) { $("voice").hidden = false; $("voice").src = voice_client; }
  const live = (id) => (list.find((s) => s.id === id) || {}).live;
  $("sessions").onchange = (e) => open(e.target.value, !!live(e.target.value));
  $("first").onclick = () => showUpTo(0);
  $("back").onclick = () => showUpTo(studio.cursor - 1);
  $("step").onclick = () => showUpTo(studio.cursor + 1);
  $("last").onclick = () => showUpTo(studio.events.length);
  $("play").onclick = play;
  await open(session, mode !== "replay" && !!live(session));
  if (mode === "voice") setInterval(() => followNewest(session), 2000);
  document.body.dataset.ready = "1";
}

main();
