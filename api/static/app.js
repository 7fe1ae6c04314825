/* Flora's browser client: plain JS, no build step, no dependencies.
 *
 * Talks to the HTTP API described in docs/http_api.md. Every call carries the API key as
 * "Authorization: Bearer KEY". Server-sent events are read with fetch() and a stream
 * reader (EventSource cannot send headers). Server text is always inserted as text, never
 * as HTML.
 */
"use strict";

(() => {
  const KEY_STORAGE = "flora.apiKey";
  const USER_STORAGE = "flora.user";
  const SESSION_STORAGE = "flora.sessionId";
  const UNFINISHED = new Set(["created", "planned", "running", "waiting_parameters", "waiting_approval"]);
  const PAUSED = new Set(["waiting_parameters", "waiting_approval"]);

  const state = {
    key: localStorage.getItem(KEY_STORAGE) || "",
    user: localStorage.getItem(USER_STORAGE) || "",
    whoami: null,
    sessions: [],
    sessionId: null,
    busy: false,
    tab: "tasks",
    tasks: [],
    timelineTaskId: null,
    timelineIds: new Set(),
    eventsAbort: null,
    lastEventId: null,
    taskRefreshTimer: null,
    loopsRefreshTimer: null,
  };

  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

  // ---------------------------------------------------------------- DOM helpers
  /** h("div", {class: "x", onclick: fn, dataset: {a: 1}}, "text", child...) — strings become text nodes. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "class") el.className = value;
      else if (name === "dataset") Object.assign(el.dataset, value);
      else if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
      else if (name === "text") el.textContent = value;
      else if (value === true) el.setAttribute(name, "");
      else el.setAttribute(name, String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
  }

  function toDate(value) {
    if (value === undefined || value === null || value === "") return null;
    if (typeof value === "number") return new Date(value < 1e12 ? value * 1000 : value);
    const n = Number(value);
    if (!Number.isNaN(n)) return toDate(n);
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? null : d;
  }

  function fmtTime(value, withDate = false) {
    const d = toDate(value);
    if (!d) return "";
    const today = new Date().toDateString() === d.toDateString();
    const time = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    if (today && !withDate) return time;
    return d.toLocaleDateString([], { month: "short", day: "numeric" }) + " " + time;
  }

  function shortId(id) {
    if (!id) return "";
    const s = String(id);
    return s.length > 14 ? s.slice(0, 14) + "…" : s;
  }

  function toast(message, kind = "error") {
    const el = $("#toast");
    el.textContent = message;
    el.dataset.kind = kind;
    el.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { el.hidden = true; }, 5000);
  }

  // ---------------------------------------------------------------- HTTP
  class ApiError extends Error {
    constructor(status, body) {
      const err = body && body.error;
      let message = err && err.message;
      if (!message && body && body.detail) {
        message = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
      }
      super(message || `HTTP ${status}`);
      this.status = status;
      this.body = body;
      this.type = (err && err.type) || "";
    }
  }

  function authHeaders(key, user, extra = {}) {
    const hdrs = { Accept: "application/json", ...extra };
    if (key) hdrs.Authorization = "Bearer " + key;
    if (user) hdrs["X-Flora-User"] = user;
    return hdrs;
  }

  function headers(extra = {}) {
    return authHeaders(state.key, state.user, extra);
  }

  async function readJson(res) {
    const text = await res.text();
    if (!text) return null;
    try { return JSON.parse(text); } catch (_e) { return { raw: text }; }
  }

  async function api(method, path, body) {
    const init = { method, headers: headers() };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    const data = await readJson(res);
    if (res.status === 401) onUnauthorized();
    if (!res.ok) throw new ApiError(res.status, data);
    return data;
  }

  /** The list inside a response: the array itself, or the first array under a usual key. */
  function listOf(body, ...keys) {
    if (Array.isArray(body)) return body;
    if (!body || typeof body !== "object") return [];
    for (const k of [...keys, "data", "items", "results"]) {
      if (Array.isArray(body[k])) return body[k];
    }
    return [];
  }

  /** Reads a text/event-stream body; calls onEvent({event, id, data}) per event. */
  async function readEventStream(res, onEvent, signal) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    let ev = { event: "", id: null, data: [] };
    const dispatch = () => {
      if (ev.data.length || ev.event) {
        const raw = ev.data.join("\n");
        let data = raw;
        try { data = raw ? JSON.parse(raw) : {}; } catch (_e) { /* keep text */ }
        onEvent({ event: ev.event || "message", id: ev.id, data });
      }
      ev = { event: "", id: null, data: [] };
    };
    const line = (text) => {
      if (text === "") return dispatch();
      if (text.startsWith(":")) return; // comment / keep-alive
      const colon = text.indexOf(":");
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? "" : text.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") ev.event = value;
      else if (field === "data") ev.data.push(value);
      else if (field === "id") ev.id = value;
    };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        for (;;) {
          const m = /\r\n|\r|\n/.exec(buf);
          if (!m) break;
          // a lone "\r" at the very end may be the first half of "\r\n": wait for more
          if (m[0] === "\r" && m.index === buf.length - 1) break;
          line(buf.slice(0, m.index));
          buf = buf.slice(m.index + m[0].length);
        }
        if (signal && signal.aborted) break;
      }
      buf += decoder.decode();
      if (buf) line(buf.replace(/\r$/, ""));
      dispatch();
    } finally {
      try { reader.releaseLock(); } catch (_e) { /* already released */ }
    }
  }

  // ---------------------------------------------------------------- auth
  function showKeyDialog(message) {
    const dlg = $("#key-dialog");
    const err = $("#key-error");
    $("#user-input").value = state.user;
    err.hidden = !message;
    err.textContent = message || "";
    dlg.hidden = false;
    $("#key-cancel").hidden = !state.whoami;
    if (!state.whoami) document.body.dataset.auth = "needed";
    setTimeout(() => $("#key-input").focus(), 0);
  }

  function onUnauthorized() {
    if (!$("#key-dialog").hidden) return;
    stopEventStream();
    state.whoami = null;
    showKeyDialog(state.key ? "The key was refused. Enter a valid key." : "");
  }

  async function whoami(key, user) {
    const res = await fetch("/v1/whoami", { headers: authHeaders(key, user) });
    const data = await readJson(res);
    return { status: res.status, data };
  }

  async function signIn() {
    let result;
    try {
      result = await whoami(state.key, state.user);
    } catch (e) {
      toast("Cannot reach the Flora server: " + e.message);
      setTimeout(signIn, 3000);
      return;
    }
    if (result.status === 401 || result.status === 403) {
      showKeyDialog(result.status === 403 ? new ApiError(403, result.data).message
        : state.key ? "The stored key was refused. Enter a valid key." : "");
      return;
    }
    if (result.status !== 200) {
      toast(new ApiError(result.status, result.data).message);
      setTimeout(signIn, 3000);
      return;
    }
    await start(result.data || {});
  }

  async function submitKey(event) {
    event.preventDefault();
    const key = $("#key-input").value.trim() || (state.whoami ? state.key : "");
    const user = $("#user-input").value.trim();
    $("#key-submit").disabled = true;
    try {
      const result = await whoami(key, user);
      if (result.status !== 200) {
        showKeyDialog(result.status === 401 ? (key ? "That key was refused." : "Enter an API key.")
          : new ApiError(result.status, result.data).message);
        $("#user-input").value = user;
        return;
      }
      const changed = key !== state.key || user !== state.user;
      state.key = key;
      state.user = user;
      localStorage.setItem(KEY_STORAGE, key);
      localStorage.setItem(USER_STORAGE, user);
      if (changed) localStorage.removeItem(SESSION_STORAGE);
      $("#key-dialog").hidden = true;
      $("#key-input").value = "";
      await start(result.data || {});
    } catch (e) {
      showKeyDialog("Cannot reach the server: " + e.message);
    } finally {
      $("#key-submit").disabled = false;
    }
  }

  async function start(who) {
    state.whoami = who;
    document.body.dataset.auth = "ok";
    const ident = $("#identity");
    clear(ident);
    ident.append(
      h("span", { class: "identity-tenant", title: "Tenant" }, who.tenant_id || "?"),
      h("span", { class: "identity-sep", "aria-hidden": "true" }, " / "),
      h("span", { class: "identity-user", title: "User" }, who.user_id || "?"),
    );
    $("#change-key-button").hidden = false;
    startEventStream();
    await Promise.all([loadSessions(), refreshTasks()]);
    const remembered = localStorage.getItem(SESSION_STORAGE);
    if (remembered && state.sessions.some((s) => s.session_id === remembered)) {
      await selectSession(remembered);
    } else {
      newChat();
    }
    document.body.dataset.ready = "1";
  }

  // ---------------------------------------------------------------- sessions
  async function loadSessions() {
    try {
      state.sessions = listOf(await api("GET", "/v1/sessions"), "sessions");
    } catch (e) {
      if (e.status !== 401) toast("Could not load conversations: " + e.message);
      return;
    }
    renderSessions();
  }

  function renderSessions() {
    const list = $("#session-list");
    clear(list);
    const sessions = [...state.sessions].sort(
      (a, b) => (toDate(b.updated_at) || 0) - (toDate(a.updated_at) || 0));
    for (const s of sessions) {
      const active = s.session_id === state.sessionId;
      const item = h("li", {
        class: "session" + (active ? " active" : ""),
        dataset: { sessionId: s.session_id },
      },
      h("button", {
        class: "session-open", type: "button", "aria-current": active ? "true" : null,
        title: s.title || "Untitled", onclick: () => selectSession(s.session_id),
      },
      h("span", { class: "session-title" }, s.title || "Untitled"),
      h("span", { class: "session-time" }, fmtTime(s.updated_at || s.created_at))),
      h("button", {
        class: "session-delete icon-button", type: "button", "aria-label": "Delete conversation " + (s.title || ""),
        title: "Delete", onclick: () => deleteSession(s),
      }, "×"));
      list.append(item);
    }
    $("#session-empty").hidden = sessions.length > 0;
  }

  function newChat() {
    state.sessionId = null;
    localStorage.removeItem(SESSION_STORAGE);
    $("#chat-title").textContent = "New chat";
    const box = $("#messages");
    clear(box);
    box.append(h("div", { class: "empty-chat" },
      h("p", { class: "empty-title" }, "What can Flora do for you?"),
      h("p", { class: "muted small" },
        "Ask in plain words. When something is missing, Flora pauses the task and asks you for it.")));
    renderSessions();
    $("#message-input").focus();
  }

  async function selectSession(sessionId) {
    let session;
    try {
      session = await api("GET", "/v1/sessions/" + encodeURIComponent(sessionId));
    } catch (e) {
      if (e.status === 404) {
        state.sessions = state.sessions.filter((s) => s.session_id !== sessionId);
        newChat();
        toast("That conversation no longer exists.");
      } else if (e.status !== 401) {
        toast("Could not open the conversation: " + e.message);
      }
      return;
    }
    state.sessionId = session.session_id || sessionId;
    localStorage.setItem(SESSION_STORAGE, state.sessionId);
    $("#chat-title").textContent = session.title || "Untitled";
    renderHistory(session.messages || []);
    renderSessions();
  }

  async function deleteSession(s) {
    if (!window.confirm(`Delete the conversation "${s.title || "Untitled"}"?`)) return;
    try {
      await api("DELETE", "/v1/sessions/" + encodeURIComponent(s.session_id));
    } catch (e) {
      if (e.status !== 404) { toast("Could not delete: " + e.message); return; }
    }
    state.sessions = state.sessions.filter((x) => x.session_id !== s.session_id);
    if (state.sessionId === s.session_id) newChat();
    else renderSessions();
  }

  async function ensureSession(firstText) {
    if (state.sessionId) return state.sessionId;
    const title = (firstText || "New chat").replace(/\s+/g, " ").trim().slice(0, 60) || "New chat";
    const created = await api("POST", "/v1/sessions", { title });
    const id = created && (created.session_id || (created.session && created.session.session_id) || created.id);
    if (!id) throw new Error("the server did not return a session id");
    state.sessionId = id;
    localStorage.setItem(SESSION_STORAGE, id);
    state.sessions.unshift({ session_id: id, title: created.title || title, created_at: created.created_at,
      updated_at: created.updated_at || Date.now() / 1000 });
    $("#chat-title").textContent = created.title || title;
    renderSessions();
    return id;
  }

  // ---------------------------------------------------------------- chat rendering
  function scrollToEnd() {
    const box = $("#messages");
    box.scrollTop = box.scrollHeight;
  }

  function userBubble(text, at) {
    return h("div", { class: "msg user" },
      h("div", { class: "bubble" }, text),
      at ? h("div", { class: "meta" }, fmtTime(at)) : null);
  }

  function describeAnswer(msg) {
    if (msg.content) return msg.content;
    if (msg.parameters && typeof msg.parameters === "object") {
      return Object.entries(msg.parameters).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ");
    }
    if (msg.approve === true) return msg.always_allow ? "Always allowed" : "Approved";
    if (msg.approve === false) return "Rejected";
    return "(answer)";
  }

  function renderHistory(messages) {
    const box = $("#messages");
    clear(box);
    if (!messages.length) {
      box.append(h("div", { class: "empty-chat" }, h("p", { class: "muted small" }, "No messages yet.")));
    }
    // a paused task's question is still open unless a later reply speaks of the same task
    const laterReplies = new Map();
    messages.forEach((m, i) => {
      if (m.reply && m.reply.task_id) laterReplies.set(m.reply.task_id, i);
    });
    messages.forEach((m, i) => {
      if (m.role === "user") {
        box.append(userBubble(describeAnswer(m), m.at));
        return;
      }
      const reply = m.reply && typeof m.reply === "object" ? m.reply : { message_type: "chat_reply", message: m.content || "" };
      const answered = reply.task_id ? laterReplies.get(reply.task_id) > i : i < messages.length - 1;
      const el = h("div", { class: "msg assistant" });
      fillReply(el, reply, { answered: answered || !isOpenQuestion(reply) });
      if (m.at) el.append(h("div", { class: "meta" }, fmtTime(m.at)));
      box.append(el);
    });
    disableAnsweredForms();
    scrollToEnd();
  }

  /** Whether a reply still asks for something the task list says is no longer asked. */
  function isOpenQuestion(reply) {
    if (reply.message_type !== "task_paused" || !reply.task_id) return true;
    const task = state.tasks.find((t) => t.task_id === reply.task_id);
    return !task || PAUSED.has(task.state);
  }

  function disableAnsweredForms() {
    for (const el of $$(".msg.assistant[data-open='1']")) {
      const task = state.tasks.find((t) => t.task_id === el.dataset.taskId);
      if (task && !PAUSED.has(task.state)) markAnswered(el);
    }
  }

  function markAnswered(msgEl) {
    msgEl.dataset.open = "0";
    for (const form of $$("form.param-form", msgEl)) {
      form.classList.add("answered");
      const fs = $("fieldset", form);
      if (fs) fs.disabled = true;
    }
    for (const b of $$(".actions button", msgEl)) b.disabled = true;
  }

  /** Fills an assistant message element with a reply of the reply contract. */
  function fillReply(el, reply, { answered = false } = {}) {
    const type = reply.message_type || "chat_reply";
    el.dataset.type = type;
    if (reply.task_id) el.dataset.taskId = reply.task_id;
    el.classList.remove("pending");
    const body = h("div", { class: "bubble" });
    const text = reply.message || (type === "task_completed" ? "Done." : "");
    switch (type) {
      case "task_error": {
        el.classList.add("error");
        body.append(h("div", { class: "reply-text" }, text || "Something went wrong."));
        const bits = [reply.error_type, reply.field ? "field " + reply.field : null,
          reply.retryable ? "you may retry" : null].filter(Boolean);
        if (bits.length) body.append(h("div", { class: "reply-detail" }, bits.join(" · ")));
        break;
      }
      case "task_completed": {
        body.append(h("div", { class: "reply-text" }, text));
        if (reply.result !== undefined && reply.result !== null) {
          body.append(h("details", { class: "result" },
            h("summary", {}, "Result" + (reply.capability ? " · " + reply.capability : "")),
            h("pre", {}, JSON.stringify(reply.result, null, 2))));
        }
        break;
      }
      case "clarification": {
        body.append(h("div", { class: "reply-text" }, text));
        const actions = h("div", { class: "actions options" });
        for (const opt of reply.options || []) {
          actions.append(h("button", {
            class: "option-button", type: "button", dataset: { optionId: opt.id },
            onclick: () => {
              if (state.busy) return;
              markAnswered(el);
              sendMessage({ content: String(opt.id) }, opt.label || String(opt.id));
            },
          }, opt.label || String(opt.id)));
        }
        body.append(actions);
        el.dataset.open = answered ? "0" : "1";
        break;
      }
      case "task_paused": {
        body.append(h("div", { class: "reply-text" }, text));
        if (reply.pause_kind === "waiting_approval") {
          if (reply.tool_call) body.append(h("pre", { class: "tool-call" }, toolCallText(reply.tool_call)));
          const actions = h("div", { class: "actions approval" },
            h("button", { class: "approve-button primary", type: "button", onclick: () => answerApproval(el, reply, true) }, "Approve"),
            reply.tool_call ? h("button", { class: "always-button", type: "button",
              onclick: () => answerApproval(el, reply, true, true) }, "Always allow " + reply.tool_call.tool) : null,
            h("button", { class: "reject-button", type: "button", onclick: () => answerApproval(el, reply, false) }, "Reject"));
          body.append(actions);
        } else {
          body.append(paramForm(el, reply));
        }
        el.dataset.open = "1";
        break;
      }
      default:
        body.append(h("div", { class: "reply-text" }, text));
    }
    const old = $(".bubble", el);
    if (old) old.replaceWith(body);
    else el.prepend(body);
    if (reply.task_id) {
      body.append(h("button", {
        class: "task-link link-button small", type: "button", title: "Show this task's timeline",
        onclick: () => showTimeline(reply.task_id),
      }, "task " + shortId(reply.task_id)));
    }
    if (answered) markAnswered(el);
  }

  // ---------------------------------------------------------------- paused tasks
  function inputFor(param, id) {
    const schema = param.schema && typeof param.schema === "object" ? param.schema : {};
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
    let input;
    if (Array.isArray(schema.enum) && schema.enum.length) {
      input = h("select", { id, name: param.name, required: true, dataset: { kind: "enum" } },
        h("option", { value: "" }, "— choose —"),
        schema.enum.map((v, i) => h("option", { value: String(i) }, String(v))));
      input._enum = schema.enum;
      if (schema.default !== undefined) {
        const i = schema.enum.indexOf(schema.default);
        if (i >= 0) input.value = String(i);
      }
    } else if (type === "boolean") {
      input = h("input", { id, name: param.name, type: "checkbox", dataset: { kind: "boolean" } });
      input.checked = schema.default === true;
    } else if (type === "integer" || type === "number") {
      input = h("input", {
        id, name: param.name, type: "number", required: true, dataset: { kind: type },
        step: type === "integer" ? "1" : "any",
        min: typeof schema.minimum === "number" ? schema.minimum : null,
        max: typeof schema.maximum === "number" ? schema.maximum : null,
      });
      if (typeof schema.default === "number") input.value = String(schema.default);
    } else {
      const kind = type === "object" || type === "array" ? "json" : "string";
      const secret = /key|token|secret|password/i.test(param.name) || schema.format === "password";
      input = h("input", {
        id, name: param.name, type: secret ? "password" : "text", required: true, dataset: { kind },
        placeholder: kind === "json" ? (type === "array" ? "[…] (JSON)" : "{…} (JSON)") : null,
      });
      if (typeof schema.default === "string") input.value = schema.default;
    }
    return input;
  }

  function valueOf(input) {
    switch (input.dataset.kind) {
      case "enum": return input._enum[Number(input.value)];
      case "boolean": return input.checked;
      case "integer": return parseInt(input.value, 10);
      case "number": return parseFloat(input.value);
      case "json":
        try { return JSON.parse(input.value); } catch (_e) { return input.value; }
      default: return input.value;
    }
  }

  let formCounter = 0;

  function paramForm(msgEl, reply) {
    const n = ++formCounter;
    const fieldset = h("fieldset", {});
    const form = h("form", { class: "param-form", dataset: { taskId: reply.task_id || "" }, novalidate: null },
      fieldset);
    fieldset.append(h("legend", { class: "visually-hidden" }, "Missing parameters"));
    for (const param of reply.missing_parameters || []) {
      const id = `param-${n}-${param.name}`;
      const input = inputFor(param, id);
      const helpId = id + "-help";
      if (param.description) input.setAttribute("aria-describedby", helpId);
      const label = h("label", { for: id, class: "param-name" }, param.name);
      const row = h("div", { class: "param-row" + (input.type === "checkbox" ? " checkbox" : "") },
        input.type === "checkbox" ? [input, label] : [label, input],
        param.description ? h("div", { id: helpId, class: "param-help" }, param.description) : null,
        param.reason ? h("div", { class: "param-reason", role: "note" }, param.reason) : null);
      fieldset.append(row);
    }
    fieldset.append(h("div", { class: "actions" },
      h("button", { class: "param-submit primary", type: "submit" }, "Submit")));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (state.busy) { toast("Wait for the current answer first.", "info"); return; }
      if (!form.reportValidity()) return;
      const parameters = {};
      for (const input of $$("input, select", form)) {
        if (input.dataset.kind !== "boolean" && input.value === "") continue;
        parameters[input.name] = valueOf(input);
      }
      markAnswered(msgEl);
      const shown = Object.entries(parameters).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ");
      sendMessage({ task_id: reply.task_id, parameters, content: "" }, shown || "(no values)");
    });
    return form;
  }

  function answerApproval(msgEl, reply, approve, always = false) {
    if (state.busy) { toast("Wait for the current answer first.", "info"); return; }
    markAnswered(msgEl);
    const payload = { task_id: reply.task_id, approve, content: "" };
    if (always) payload.always_allow = true;
    sendMessage(payload, always ? "Always allowed" : approve ? "Approved" : "Rejected");
  }

  /** A tool call of the agent as one line: tool(arguments), or its outcome. */
  function toolCallText(data) {
    const args = data.arguments ? JSON.stringify(data.arguments) : "";
    return `${data.tool}(${args.length > 200 ? args.slice(0, 199) + "…" : args})`;
  }

  function toolResultText(data) {
    const said = data.ok ? (data.result || "") : (data.error || "");
    const short = said.length > 200 ? said.slice(0, 199) + "…" : said;
    return `${data.tool} ${data.ok ? "ok" : "failed"} in ${Math.round(data.elapsed_ms || 0)} ms: ${short}`;
  }

  /** What a progress line or a timeline entry says beside its event type. */
  function eventSummary(ev) {
    const data = ev.data || {};
    if (ev.event_type === "TOOL_CALLED") return "→ " + toolCallText(data);
    if (ev.event_type === "TOOL_RESULT") return "← " + toolResultText(data);
    return "";
  }

  // ---------------------------------------------------------------- sending
  function setBusy(busy) {
    state.busy = busy;
    $("#send-button").disabled = busy;
    document.body.dataset.busy = busy ? "1" : "0";
  }

  async function sendMessage(payload, shownText) {
    if (state.busy) return;
    setBusy(true);
    const box = $("#messages");
    let pending = null;
    try {
      const sessionId = await ensureSession(shownText);
      for (const empty of $$(".empty-chat", box)) empty.remove();
      box.append(userBubble(shownText, Date.now() / 1000));
      const progress = h("ul", { class: "progress", "aria-label": "Progress" });
      pending = h("div", { class: "msg assistant pending", dataset: { type: "pending" } },
        h("div", { class: "bubble" }, h("span", { class: "typing", "aria-label": "Flora is working" },
          h("span", {}), h("span", {}), h("span", {}))),
        progress);
      box.append(pending);
      scrollToEnd();

      const res = await fetch("/v1/messages", {
        method: "POST",
        headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
        body: JSON.stringify({ ...payload, session_id: sessionId, stream: true }),
      });
      if (res.status === 401) onUnauthorized();
      if (!res.ok) throw new ApiError(res.status, await readJson(res));

      let reply = null;
      const ctype = res.headers.get("content-type") || "";
      if (ctype.includes("text/event-stream")) {
        await readEventStream(res, ({ event, data }) => {
          if (event === "flora_event" && data && typeof data === "object") {
            const said = eventSummary(data);
            progress.append(h("li", { class: "progress-line", dataset: { eventType: data.event_type || "" } },
              h("span", { class: "progress-type" }, data.event_type || "event"),
              said ? h("span", { class: "progress-tool" }, said) : null,
              h("span", { class: "progress-time" }, fmtTime(data.created_at))));
            scrollToEnd();
          } else if (event === "reply") {
            reply = data;
            fillReply(pending, reply);
            scrollToEnd();
          } else if (event === "error") {
            const err = data && data.error ? data.error : data;
            reply = { message_type: "task_error", error_type: (err && err.type) || "internal",
              message: (err && err.message) || String(err) };
            fillReply(pending, reply);
          }
        });
      } else {
        reply = await readJson(res);
        fillReply(pending, reply || { message_type: "task_error", message: "Empty answer from the server." });
      }
      if (!reply) {
        fillReply(pending, { message_type: "task_error", error_type: "unavailable",
          message: "The connection closed before Flora answered." });
      }
      if (reply && reply.task_id) {
        // an earlier question about the same task is answered by this reply
        for (const el of $$(`.msg.assistant[data-open='1']`, box)) {
          if (el !== pending && el.dataset.taskId === reply.task_id) markAnswered(el);
        }
      }
      if (!progress.children.length) progress.remove();
      pending.append(h("div", { class: "meta" }, fmtTime(Date.now() / 1000)));
      const s = state.sessions.find((x) => x.session_id === sessionId);
      if (s) s.updated_at = Date.now() / 1000;
      renderSessions();
    } catch (e) {
      if (e.status === 404 && e.body && e.body.error && e.body.error.field === "session_id") {
        state.sessions = state.sessions.filter((x) => x.session_id !== state.sessionId);
        state.sessionId = null;
        localStorage.removeItem(SESSION_STORAGE);
        renderSessions();
        e.message = "This conversation no longer exists on the server; your next message starts a new one.";
      }
      const err = { message_type: "task_error", error_type: e.type || "http", message: e.message || String(e) };
      if (pending) fillReply(pending, err);
      else toast(err.message);
    } finally {
      setBusy(false);
      scrollToEnd();
      scheduleTaskRefresh(0);
    }
  }

  function onComposerSubmit(event) {
    event.preventDefault();
    const input = $("#message-input");
    const text = input.value.trim();
    if (!text || state.busy) return;
    input.value = "";
    sendMessage({ content: text }, text);
  }

  // ---------------------------------------------------------------- live events
  function setLive(on) {
    const el = $("#live-status");
    el.dataset.live = on ? "on" : "off";
    $(".live-text", el).textContent = on ? "live" : "offline";
  }

  function stopEventStream() {
    if (state.eventsAbort) state.eventsAbort.abort();
    state.eventsAbort = null;
    setLive(false);
  }

  function startEventStream() {
    stopEventStream();
    const ctrl = new AbortController();
    state.eventsAbort = ctrl;
    let delay = 1000;
    const loop = async () => {
      while (!ctrl.signal.aborted) {
        try {
          const hdrs = headers({ Accept: "text/event-stream" });
          if (state.lastEventId) hdrs["Last-Event-ID"] = state.lastEventId;
          const res = await fetch("/v1/events/stream", { headers: hdrs, signal: ctrl.signal });
          if (res.status === 401) { onUnauthorized(); return; }
          if (!res.ok) throw new ApiError(res.status, await readJson(res));
          setLive(true);
          delay = 1000;
          await readEventStream(res, ({ event, id, data }) => {
            if (id) state.lastEventId = id;
            if (event === "flora_event" && data && typeof data === "object") onFloraEvent(data);
          }, ctrl.signal);
        } catch (e) {
          if (ctrl.signal.aborted) return;
        }
        setLive(false);
        if (ctrl.signal.aborted) return;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 15000);
      }
    };
    loop();
  }

  function onFloraEvent(ev) {
    scheduleTaskRefresh();
    if (state.timelineTaskId && ev.task_id === state.timelineTaskId) {
      appendTimelineEvent(ev);
      if (ev.event_type === "WHITEBOARD_UPDATED") showWhiteboard(state.timelineTaskId);
    }
    if (/LOOP|TRIGGERED/.test(ev.event_type || "") && state.tab === "loops") scheduleLoopsRefresh();
    if (/^MEMORY_(WRITTEN|FORGOTTEN)$/.test(ev.event_type || "") && state.tab === "memory") scheduleMemoryRefresh();
  }

  // ---------------------------------------------------------------- tasks
  function scheduleTaskRefresh(ms = 250) {
    clearTimeout(state.taskRefreshTimer);
    state.taskRefreshTimer = setTimeout(refreshTasks, ms);
  }

  async function refreshTasks() {
    let tasks;
    try {
      tasks = listOf(await api("GET", "/v1/tasks?limit=50"), "tasks");
    } catch (e) {
      if (e.status !== 401) setLive(false);
      return;
    }
    state.tasks = tasks;
    renderTasks();
    disableAnsweredForms();
  }

  function badge(stateName) {
    const s = stateName || "unknown";
    return h("span", { class: "badge", dataset: { state: s } }, s.replace(/_/g, " "));
  }

  function renderTasks() {
    const list = $("#tasks-list");
    clear(list);
    for (const t of state.tasks) {
      const unfinished = UNFINISHED.has(t.state);
      const selected = t.task_id === state.timelineTaskId;
      list.append(h("li", {
        class: "task item" + (selected ? " selected" : ""),
        dataset: { taskId: t.task_id, state: t.state || "unknown" },
      },
      h("button", {
        class: "item-main", type: "button", title: "Show the timeline of " + t.task_id,
        onclick: () => showTimeline(t.task_id),
      },
      h("span", { class: "item-line" }, badge(t.state),
        h("span", { class: "item-title" }, t.content || t.capability || t.task_id)),
      h("span", { class: "item-sub" },
        [t.capability, shortId(t.task_id), fmtTime(t.updated_at || t.created_at)].filter(Boolean).join(" · ")),
      t.error ? h("span", { class: "item-error" }, t.error) : null),
      unfinished ? h("button", {
        class: "task-cancel small-button", type: "button", "aria-label": "Cancel task " + t.task_id,
        onclick: () => cancelTask(t.task_id),
      }, "Cancel") : null));
    }
    $("#tasks-empty").hidden = state.tasks.length > 0;
  }

  async function cancelTask(taskId) {
    try {
      await api("POST", `/v1/tasks/${encodeURIComponent(taskId)}/cancel`);
    } catch (e) {
      toast("Could not cancel: " + e.message);
    }
    scheduleTaskRefresh(0);
  }

  // ---------------------------------------------------------------- loops
  function scheduleLoopsRefresh(ms = 300) {
    clearTimeout(state.loopsRefreshTimer);
    state.loopsRefreshTimer = setTimeout(refreshLoops, ms);
  }

  function loopIsPaused(l) {
    return l.paused === true || l.state === "paused";
  }

  function describeSchedule(s) {
    if (!s) return "";
    if (typeof s === "string") return s;
    return s.text || s.description || "";
  }

  async function refreshLoops() {
    let loops;
    try {
      loops = listOf(await api("GET", "/v1/loops"), "loops", "loop_tasks");
    } catch (e) {
      if (e.status !== 401) loopStatus("Could not load loop tasks: " + e.message, true);
      return;
    }
    const list = $("#loops-list");
    clear(list);
    for (const l of loops) {
      if (!l || typeof l !== "object") continue;
      const id = l.loop_task_id || l.id || "";
      const paused = loopIsPaused(l);
      const stateName = l.state || (paused ? "paused" : "active");
      const title = l.description || l.content || l.request || describeSchedule(l.schedule) || id;
      const next = paused ? "paused" : l.next_fire_at != null ? "next: " + fmtTime(l.next_fire_at, true) : "no next run";
      const sched = describeSchedule(l.schedule);
      list.append(h("li", { class: "loop item", dataset: { loopId: id, state: stateName } },
        h("div", { class: "item-main static" },
          h("span", { class: "item-line" }, badge(stateName), h("span", { class: "item-title" }, title)),
          h("span", { class: "item-sub" }, [sched && sched !== title ? sched : null, next,
            l.capability].filter(Boolean).join(" · "))),
        h("div", { class: "loop-actions" },
          paused
            ? h("button", { class: "small-button loop-resume", type: "button", onclick: () => loopAction(id, "resume") }, "Resume")
            : h("button", { class: "small-button loop-pause", type: "button", onclick: () => loopAction(id, "pause") }, "Pause"),
          h("button", { class: "small-button loop-trigger", type: "button", onclick: () => loopAction(id, "trigger") }, "Run now"),
          h("button", { class: "small-button danger loop-delete", type: "button", onclick: () => loopAction(id, "delete") }, "Delete"))));
    }
    $("#loops-empty").hidden = list.children.length > 0;
  }

  function loopStatus(text, isError = false) {
    const el = $("#loop-status");
    el.textContent = text || "";
    el.classList.toggle("error-text", !!isError);
  }

  async function loopAction(id, action) {
    if (action === "delete" && !window.confirm("Delete this loop task?")) return;
    try {
      if (action === "delete") await api("DELETE", "/v1/loops/" + encodeURIComponent(id));
      else await api("POST", `/v1/loops/${encodeURIComponent(id)}/${action}`);
      loopStatus({ pause: "Paused.", resume: "Resumed.", trigger: "Started a run.", delete: "Deleted." }[action]);
    } catch (e) {
      loopStatus(e.message, true);
    }
    scheduleLoopsRefresh(0);
    scheduleTaskRefresh();
  }

  async function createLoop(event) {
    event.preventDefault();
    const input = $("#loop-input");
    const text = input.value.trim();
    if (!text) return;
    $("#loop-create").disabled = true;
    try {
      const res = await api("POST", "/v1/loops", { request: text });
      if (res && res.message_type === "task_error") {
        loopStatus(res.message || "Flora could not create it.", true);
      } else {
        input.value = "";
        loopStatus((res && res.message) || "Loop task created.");
      }
    } catch (e) {
      loopStatus(e.message, true);
    } finally {
      $("#loop-create").disabled = false;
    }
    scheduleLoopsRefresh(0);
  }

  // ---------------------------------------------------------------- memory
  // what Flora remembers about the signed-in person: listed (or searched), forgotten one by one or all
  function scheduleMemoryRefresh(ms = 300) {
    clearTimeout(state.memoryRefreshTimer);
    state.memoryRefreshTimer = setTimeout(refreshMemories, ms);
  }

  function memoryStatus(text, isError = false) {
    const el = $("#memory-status");
    el.textContent = text || "";
    el.classList.toggle("error-text", !!isError);
  }

  async function refreshMemories() {
    const query = $("#memory-query").value.trim();
    let memories;
    try {
      memories = listOf(await api("GET", "/v1/memories" + (query ? "?q=" + encodeURIComponent(query) : "")), "memories");
    } catch (e) {
      if (e.status !== 401) memoryStatus("Could not load memories: " + e.message, true);
      return;
    }
    const list = $("#memory-list");
    clear(list);
    for (const r of memories) {
      if (!r || typeof r !== "object" || !r.memory_id) continue;
      const sub = [r.kind, r.subject, fmtTime(r.updated_at || r.created_at, true),
        r.score != null ? "match " + Number(r.score).toFixed(2) : null].filter(Boolean).join(" · ");
      list.append(h("li", { class: "memory item", dataset: { memoryId: r.memory_id } },
        h("div", { class: "item-main static" },
          h("span", { class: "item-title memory-fact" }, r.fact || ""),
          h("span", { class: "item-sub" }, sub)),
        h("button", {
          class: "small-button danger memory-forget", type: "button", "aria-label": "Forget: " + (r.fact || r.memory_id),
          onclick: () => forgetMemory(r.memory_id),
        }, "Forget")));
    }
    $("#memory-empty").textContent = query ? "Nothing remembered bears on that." : "Flora remembers nothing about you yet.";
    $("#memory-empty").hidden = list.children.length > 0;
    $("#memory-clear").disabled = !query && list.children.length === 0;
  }

  async function forgetMemory(id) {
    try {
      await api("DELETE", "/v1/memories/" + encodeURIComponent(id));
      memoryStatus("Forgotten.");
    } catch (e) {
      memoryStatus(e.status === 404 ? "Already forgotten." : "Could not forget it: " + e.message, e.status !== 404);
    }
    scheduleMemoryRefresh(0);
  }

  async function forgetEverything() {
    if (!window.confirm("Forget everything Flora remembers about you?")) return;
    try {
      const res = await api("DELETE", "/v1/memories");
      const n = (res && res.removed) || 0;
      memoryStatus(n === 1 ? "Forgot 1 memory." : `Forgot ${n} memories.`);
    } catch (e) {
      memoryStatus("Could not forget: " + e.message, true);
    }
    scheduleMemoryRefresh(0);
  }

  // ---------------------------------------------------------------- timeline
  function eventItem(ev) {
    const data = ev.data && typeof ev.data === "object" && Object.keys(ev.data).length ? ev.data : null;
    const json = data ? JSON.stringify(data, null, 1) : "";
    return h("li", { class: "event", dataset: { eventId: ev.event_id, eventType: ev.event_type || "" } },
      h("div", { class: "event-head" },
        h("span", { class: "event-type" }, ev.event_type || "event"),
        h("span", { class: "event-time" }, fmtTime(ev.created_at, true))),
      ev.source ? h("div", { class: "event-source" }, "from " + ev.source) : null,
      eventSummary(ev) ? h("div", { class: "event-tool" }, eventSummary(ev)) : null,
      data ? (json.length > 160
        ? h("details", { class: "event-data" }, h("summary", {}, "data"), h("pre", {}, json))
        : h("pre", { class: "event-data" }, json)) : null);
  }

  function appendTimelineEvent(ev) {
    const id = ev.event_id != null ? String(ev.event_id) : null;
    if (id && state.timelineIds.has(id)) return;
    if (id) state.timelineIds.add(id);
    $("#timeline-list").append(eventItem(ev));
  }

  // the task's whiteboard: facts, to-dos, decisions and notes its steps wrote
  const BOARD_SECTIONS = [["facts", "Facts"], ["todo", "To do"], ["decisions", "Decisions"], ["notes", "Notes"]];

  async function showWhiteboard(taskId) {
    const section = $("#whiteboard");
    let board = {};
    try {
      board = (await api("GET", "/v1/tasks/" + encodeURIComponent(taskId))).whiteboard || {};
    } catch (e) {
      board = {};
    }
    if (state.timelineTaskId !== taskId) return;
    const body = $("#whiteboard-body");
    clear(body);
    for (const [key, title] of BOARD_SECTIONS) {
      const lines = board[key] || [];
      if (!lines.length) continue;
      body.append(h("h4", { class: "small muted" }, title),
        h("ul", { class: "whiteboard-" + key },
          ...lines.map((line) => h("li", { "data-entry-id": line.id, class: line.done ? "done" : null },
            key === "todo" ? (line.done ? "☑ " : "☐ ") : "", line.text))));
    }
    section.hidden = !body.childNodes.length;
  }

  async function showTimeline(taskId) {
    state.timelineTaskId = taskId;
    state.timelineIds = new Set();
    selectTab("timeline");
    renderTasks();
    const title = $("#timeline-title");
    clear(title);
    title.append("Events of ", h("code", {}, taskId));
    const list = $("#timeline-list");
    clear(list);
    list.dataset.taskId = taskId;
    $("#whiteboard").hidden = true;
    showWhiteboard(taskId);
    try {
      const events = listOf(await api("GET", "/v1/events?task_id=" + encodeURIComponent(taskId)), "events");
      if (state.timelineTaskId !== taskId) return;
      events.sort((a, b) => (a.event_id || 0) - (b.event_id || 0));
      for (const ev of events) appendTimelineEvent(ev);
      if (!events.length) list.append(h("li", { class: "muted small" }, "No events yet."));
    } catch (e) {
      if (e.status !== 401) list.append(h("li", { class: "error-text small" }, "Could not load events: " + e.message));
    }
  }

  // ---------------------------------------------------------------- tabs
  function selectTab(name) {
    state.tab = name;
    for (const tab of $$(".tab")) {
      const on = tab.dataset.tab === name;
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
      $("#" + tab.getAttribute("aria-controls")).hidden = !on;
    }
    if (name === "loops") refreshLoops();
    if (name === "memory") refreshMemories();
    if (name === "tasks") scheduleTaskRefresh(0);
  }

  function onTabKey(event) {
    const tabs = $$(".tab");
    const i = tabs.indexOf(event.target);
    if (i < 0) return;
    let j = null;
    if (event.key === "ArrowRight") j = (i + 1) % tabs.length;
    if (event.key === "ArrowLeft") j = (i - 1 + tabs.length) % tabs.length;
    if (j === null) return;
    event.preventDefault();
    tabs[j].focus();
    selectTab(tabs[j].dataset.tab);
  }

  // ---------------------------------------------------------------- wiring
  function init() {
    $("#composer").addEventListener("submit", onComposerSubmit);
    $("#message-input").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        $("#composer").requestSubmit();
      }
    });
    $("#new-chat-button").addEventListener("click", newChat);
    $("#key-form").addEventListener("submit", submitKey);
    $("#change-key-button").addEventListener("click", () => showKeyDialog(""));
    $("#key-cancel").addEventListener("click", () => { $("#key-dialog").hidden = true; });
    $("#key-dialog").addEventListener("keydown", (event) => {
      if (event.key === "Escape" && state.whoami) $("#key-dialog").hidden = true;
    });
    $("#tasks-refresh").addEventListener("click", () => scheduleTaskRefresh(0));
    $("#loop-form").addEventListener("submit", createLoop);
    $("#memory-search").addEventListener("submit", (event) => { event.preventDefault(); refreshMemories(); });
    $("#memory-clear").addEventListener("click", forgetEverything);
    for (const tab of $$(".tab")) tab.addEventListener("click", () => selectTab(tab.dataset.tab));
    $(".tabs").addEventListener("keydown", onTabKey);
    setInterval(() => { if (state.tab === "loops" && document.body.dataset.auth === "ok") refreshLoops(); }, 30000);
    window.addEventListener("beforeunload", stopEventStream);
    signIn();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
