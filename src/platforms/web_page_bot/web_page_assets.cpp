#include "platforms/web_page_bot/web_page_assets.hpp"

#include <array>
#include <utility>

#include "util/markup.hpp"

namespace sb::platforms::web_page {
namespace {

// The widget; __SB_CONFIG__ becomes {"title","page","siteKey","texts"}. Kept small and free of
// dependencies on purpose: it runs inside other people's pages.
constexpr std::string_view kWidget = R"JS((function () {
  "use strict";
  var C = __SB_CONFIG__, T = C.texts, me = document.currentScript;
  if (!me || !window.WebSocket) return;
  var base = me.src.replace(/\/widget\.js([?#].*)?$/, "");
  var full = C.page || me.getAttribute("data-mode") === "page";
  var store = {
    get: function (k) { try { return localStorage.getItem(k); } catch (e) { return null; } },
    set: function (k, v) { try { localStorage.setItem(k, v); } catch (e) {} }
  };
  var vkey = "sb-visitor:" + base, tkey = "sb-ticket:" + base;
  var visitor = store.get(vkey);
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(visitor || "")) {
    var b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 15) | 64; b[8] = (b[8] & 63) | 128;
    var h = Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
    visitor = h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
    store.set(vkey, visitor);
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  }
  var host = el("div");
  host.setAttribute("data-switchboard-chat", "");
  var root = host.attachShadow ? host.attachShadow({ mode: "open" }) : host;
  var style = el("style");
  style.textContent =
    ":host{all:initial}*{box-sizing:border-box;font:14px/1.4 system-ui,sans-serif}" +
    ".btn{position:fixed;right:20px;bottom:20px;width:56px;height:56px;border-radius:50%;border:0;background:#2563eb;color:#fff;font-size:24px;cursor:pointer;box-shadow:0 4px 14px #0004;z-index:2147483646}" +
    ".panel{position:fixed;right:20px;bottom:88px;width:360px;max-width:calc(100vw - 40px);height:520px;max-height:calc(100vh - 120px);display:none;flex-direction:column;background:#fff;color:#111;border-radius:12px;box-shadow:0 8px 30px #0005;overflow:hidden;z-index:2147483647}" +
    ".panel.open,.full{display:flex}.full{position:fixed;inset:0;width:auto;height:auto;max-width:none;max-height:none;right:0;bottom:0;border-radius:0;box-shadow:none}" +
    ".head{display:flex;align-items:center;padding:12px 14px;background:#2563eb;color:#fff}.head b{flex:1;font-weight:600}.head button{background:none;border:0;color:#fff;font-size:18px;cursor:pointer}" +
    ".log{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:8px;background:#f8fafc}" +
    ".msg{max-width:85%;padding:8px 11px;border-radius:10px;white-space:pre-wrap;word-wrap:break-word}.visitor{align-self:flex-end;background:#2563eb;color:#fff}.bot{align-self:flex-start;background:#e5e7eb}" +
    ".msg img{max-width:100%;display:block;border-radius:6px}.msg a{color:inherit}" +
    ".note{align-self:center;color:#6b7280;font-size:12px}.gate{padding:8px;display:none;justify-content:center}" +
    "form{display:flex;gap:6px;padding:10px;border-top:1px solid #e5e7eb}textarea{flex:1;resize:none;height:40px;padding:8px;border:1px solid #d1d5db;border-radius:8px}" +
    "form button{padding:0 14px;border:0;border-radius:8px;background:#2563eb;color:#fff;cursor:pointer}form button:disabled{background:#9ca3af}";
  root.appendChild(style);
  var panel = el("div", full ? "panel full" : "panel");
  panel.setAttribute("role", "dialog");
  panel.setAttribute("aria-label", C.title);
  var head = el("div", "head"), title = el("b", "", C.title);
  head.appendChild(title);
  // Turnstile's widget goes in the page's own DOM (it does not render inside a shadow root) and is
  // shown here through a slot.
  var log = el("div", "log"), gate = el("div", "gate"), form = el("form"), slot = el("slot");
  slot.name = "gate";
  gate.appendChild(slot);
  log.setAttribute("aria-live", "polite");
  var input = el("textarea"), send = el("button", "", T.send);
  input.placeholder = T.placeholder;
  input.setAttribute("aria-label", T.placeholder);
  input.maxLength = 4000;
  send.type = "submit";
  form.appendChild(input); form.appendChild(send);
  panel.appendChild(head); panel.appendChild(log); panel.appendChild(gate); panel.appendChild(form);
  root.appendChild(panel);
  if (!full) {
    var launcher = el("button", "btn", "\uD83D\uDCAC"), close = el("button", "", "\u00D7");
    launcher.setAttribute("aria-label", T.open);
    close.setAttribute("aria-label", T.close);
    head.appendChild(close);
    launcher.onclick = function () { panel.classList.toggle("open"); if (panel.classList.contains("open")) { start(); input.focus(); } };
    close.onclick = function () { panel.classList.remove("open"); };
    root.appendChild(launcher);
  }
  (document.body || document.documentElement).appendChild(host);

  function note(text) { var n = el("div", "note", text); log.appendChild(n); log.scrollTop = log.scrollHeight; return n; }
  function show(m) {
    var box = el("div", "msg " + (m.role === "visitor" ? "visitor" : "bot"));
    (m.elements || []).forEach(function (e) {
      if (e.type === "text") box.appendChild(document.createTextNode(e.text));
      else if (e.type === "image" && /^(https?:|data:image\/)/.test(e.url)) { var i = el("img"); i.src = e.url; i.alt = ""; box.appendChild(i); }
      else if (e.type === "file" && /^https?:/.test(e.url)) { var a = el("a", "", e.name || e.url); a.href = e.url; a.target = "_blank"; a.rel = "noopener noreferrer"; box.appendChild(a); }
    });
    log.appendChild(box);
    log.scrollTop = log.scrollHeight;
  }

  var ws = null, timer = null, delay = 1000, status = null, ticket = null, opened = false;
  function wanted() { return (full || panel.classList.contains("open")) && !document.hidden; }
  function setStatus(text) { if (status) status.remove(); status = text ? note(text) : null; send.disabled = !!text; }
  function start() { if (!ws && !timer) connect(); }
  function session(op, v) {
    try { return op === "get" ? sessionStorage.getItem(tkey) : op === "set" ? sessionStorage.setItem(tkey, v) : sessionStorage.removeItem(tkey); } catch (e) { return null; }
  }
  function connect() {
    timer = null;
    if (C.siteKey && !ticket) ticket = session("get");
    if (C.siteKey && !ticket) return challenge();
    setStatus(T.connecting);
    opened = false;
    var url = base.replace(/^http/, "ws") + "/ws?visitor=" + visitor + (ticket ? "&ticket=" + encodeURIComponent(ticket) : "");
    ws = new WebSocket(url);
    ws.onopen = function () { opened = true; delay = 1000; };
    ws.onmessage = function (ev) {
      var f; try { f = JSON.parse(ev.data); } catch (e) { return; }
      if (f.type === "ready") { log.textContent = ""; status = null; (f.history || []).forEach(show); setStatus(""); }
      else if (f.type === "message") show(f);
      else if (f.type === "error") note(T[f.code] || T.error);
    };
    ws.onclose = function () {
      ws = null;
      // Refused before it opened: with Turnstile on, the ticket may have expired.
      if (!opened && C.siteKey) { ticket = null; session("remove"); }
      setStatus(T.offline);
      // A closed panel or a hidden tab reconnects when it is looked at again.
      if (!wanted()) return;
      timer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  document.addEventListener("visibilitychange", function () { if (wanted()) start(); });
  var tsLoaded = false, box = null;
  function challenge() {
    setStatus(T.verify);
    function render() {
      if (box) box.remove();
      box = el("div");
      box.slot = "gate";
      host.appendChild(box);
      gate.style.display = "flex";
      window.turnstile.render(box, {
        sitekey: C.siteKey,
        callback: function (token) {
          fetch(base + "/session", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ visitor: visitor, token: token }) })
            .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
            .then(function (d) { ticket = d.ticket; session("set", ticket); done(); connect(); })
            .catch(retry);
        },
        "error-callback": function () { retry(); return true; }
      });
    }
    function done() { if (box) box.remove(); box = null; gate.style.display = "none"; }
    function retry() { done(); setStatus(T.verify_failed); timer = setTimeout(connect, 3000); }
    if (window.turnstile) return render();
    if (tsLoaded) return;
    tsLoaded = true;
    var s = document.createElement("script");
    s.src = "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit";
    s.async = true;
    s.onload = render;
    document.head.appendChild(s);
  }
  form.onsubmit = function (ev) {
    ev.preventDefault();
    var text = input.value.trim();
    if (!text || !ws || ws.readyState !== 1) return;
    ws.send(JSON.stringify({ type: "message", text: text }));
    show({ role: "visitor", elements: [{ type: "text", text: text }] });
    input.value = "";
  };
  input.onkeydown = function (ev) { if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); form.onsubmit(ev); } };
  setInterval(function () { if (ws && ws.readyState === 1 && wanted()) ws.send('{"type":"ping"}'); }, 240000);
  if (full) start();
})();
)JS";

struct Texts {
  std::string_view language;
  std::string_view html_lang;
  std::array<std::pair<std::string_view, std::string_view>, 11> entries;
};

// The keys the widget reads; "rate_limited", "too_large" and "bad_frame" are also the codes of
// the server's error frames.
constexpr Texts kTexts[] = {
    {"en_US",
     "en",
     {{{"open", "Open chat"},
       {"close", "Close chat"},
       {"placeholder", "Type a message..."},
       {"send", "Send"},
       {"connecting", "Connecting..."},
       {"offline", "Disconnected. Reconnecting..."},
       {"verify", "Please complete the check below to start chatting."},
       {"verify_failed", "The check failed. Retrying..."},
       {"rate_limited", "You are sending messages too quickly. Please wait a moment."},
       {"too_large", "That message is too long."},
       {"error", "Something went wrong. Please try again."}}}},
    {"zh_Hans",
     "zh-Hans",
     {{{"open", "打开聊天"},
       {"close", "关闭聊天"},
       {"placeholder", "输入消息..."},
       {"send", "发送"},
       {"connecting", "正在连接..."},
       {"offline", "连接已断开，正在重连..."},
       {"verify", "请先完成下方的验证再开始聊天。"},
       {"verify_failed", "验证失败，正在重试..."},
       {"rate_limited", "消息发送过快，请稍候。"},
       {"too_large", "消息太长了。"},
       {"error", "出错了，请重试。"}}}},
    {"zh_Hant",
     "zh-Hant",
     {{{"open", "開啟聊天"},
       {"close", "關閉聊天"},
       {"placeholder", "輸入訊息..."},
       {"send", "傳送"},
       {"connecting", "正在連線..."},
       {"offline", "連線已中斷，正在重新連線..."},
       {"verify", "請先完成下方的驗證再開始聊天。"},
       {"verify_failed", "驗證失敗，正在重試..."},
       {"rate_limited", "訊息傳送過快，請稍候。"},
       {"too_large", "訊息太長了。"},
       {"error", "發生錯誤，請重試。"}}}},
    {"ja_JP",
     "ja",
     {{{"open", "チャットを開く"},
       {"close", "チャットを閉じる"},
       {"placeholder", "メッセージを入力..."},
       {"send", "送信"},
       {"connecting", "接続中..."},
       {"offline", "切断されました。再接続中..."},
       {"verify", "チャットを始めるには、下の確認を完了してください。"},
       {"verify_failed", "確認に失敗しました。再試行中..."},
       {"rate_limited", "送信が速すぎます。少しお待ちください。"},
       {"too_large", "メッセージが長すぎます。"},
       {"error", "エラーが発生しました。もう一度お試しください。"}}}},
    {"es_ES",
     "es",
     {{{"open", "Abrir chat"},
       {"close", "Cerrar chat"},
       {"placeholder", "Escribe un mensaje..."},
       {"send", "Enviar"},
       {"connecting", "Conectando..."},
       {"offline", "Desconectado. Reconectando..."},
       {"verify", "Completa la verificación de abajo para empezar a chatear."},
       {"verify_failed", "La verificación falló. Reintentando..."},
       {"rate_limited", "Estás enviando mensajes demasiado rápido. Espera un momento."},
       {"too_large", "Ese mensaje es demasiado largo."},
       {"error", "Algo salió mal. Inténtalo de nuevo."}}}},
    {"ru_RU",
     "ru",
     {{{"open", "Открыть чат"},
       {"close", "Закрыть чат"},
       {"placeholder", "Введите сообщение..."},
       {"send", "Отправить"},
       {"connecting", "Подключение..."},
       {"offline", "Соединение потеряно. Переподключение..."},
       {"verify", "Пройдите проверку ниже, чтобы начать чат."},
       {"verify_failed", "Проверка не пройдена. Повтор..."},
       {"rate_limited", "Вы отправляете сообщения слишком часто. Подождите немного."},
       {"too_large", "Сообщение слишком длинное."},
       {"error", "Что-то пошло не так. Попробуйте ещё раз."}}}},
};

const Texts& TextsFor(std::string_view language) {
  for (const auto& t : kTexts) {
    if (t.language == language) return t;
  }
  return kTexts[0];
}

// JSON inside a <script> or a .js file: "</script>" and U+2028/2029 must not end or break it.
std::string JsonForScript(const util::JsonObject& value) {
  const std::string json = util::SerializeJson(value);
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '\xe2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xa8' || json[i + 2] == '\xa9')) {
      out += json[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

util::JsonObject UiTexts(std::string_view language) {
  util::JsonObject out;
  for (const auto& [key, text] : TextsFor(language).entries) out[key] = text;
  return out;
}

std::string HtmlLanguage(std::string_view language) {
  return std::string(TextsFor(language).html_lang);
}

std::string RenderWidgetScript(const WidgetSettings& settings) {
  util::JsonObject config{{"title", settings.title},
                          {"siteKey", settings.site_key},
                          {"texts", UiTexts(settings.language)}};
  std::string out(kWidget);
  constexpr std::string_view kSlot = "__SB_CONFIG__";
  out.replace(out.find(kSlot), kSlot.size(), JsonForScript(config));
  return out;
}

std::string RenderChatPage(const WidgetSettings& settings, std::string_view script_url) {
  return "<!doctype html>\n<html lang=\"" + HtmlLanguage(settings.language) +
         "\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width,initial-scale=1\"><title>" +
         util::EscapeMarkup(settings.title) + "</title></head><body><script src=\"" +
         util::EscapeMarkup(script_url) + "\" data-mode=\"page\"></script></body></html>\n";
}

std::string ChatPagePolicy(bool turnstile) {
  std::string cf = turnstile ? " https://challenges.cloudflare.com" : "";
  return "default-src 'none'; script-src 'self'" + cf + "; frame-src" +
         (turnstile ? cf : std::string(" 'none'")) +
         "; connect-src 'self' ws: wss:; img-src https: data:; style-src 'unsafe-inline'; "
         "base-uri 'none'; form-action 'none'";
}

std::string EmbedSnippet(std::string_view script_url) {
  return "<script src=\"" + util::EscapeMarkup(script_url) + "\" async></script>";
}

}  // namespace sb::platforms::web_page
