// One debug-chat session (person or group): its connection state, its history as a log region,
// the reset, and the composer. Each session has its own socket and history.
import { useLayoutEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../../components/PageState";
import { ChatBubble } from "./ChatBubble";
import { Composer, type ComposerValue } from "./Composer";
import { ConnectionStatus } from "./ConnectionStatus";
import type { ChainElement, ChatMessage, SessionType } from "./types";
import { useChatSocket, type Notice } from "./useChatSocket";

// The bot's account id in the debug chat's group sessions (docs/bots.md).
const botAccountId = "websocketbot";

export function ChatPanel({ pipelineUuid, sessionType }: { pipelineUuid: string; sessionType: SessionType }) {
  const { t } = useTranslation("pipelines");
  const [draft, setDraft] = useState<ComposerValue>({ text: "", image: null });
  const [atBot, setAtBot] = useState(true);
  const [returned, setReturned] = useState<string | null>(null);
  const [resetError, setResetError] = useState<unknown>(null);
  const [resetting, setResetting] = useState(false);
  const chat = useChatSocket(pipelineUuid, sessionType, (unsent, why) => {
    // Put it back unless the person already started something new.
    setDraft((d) => (d.text === "" && !d.image ? unsent : d));
    setReturned(why === "lost" ? t("chat.returnedLost") : t("chat.returnedRefused"));
  });
  const connected = chat.connection.status === "connected";

  const list = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const messages = [...chat.messages.values()].sort((a, b) => a.id - b.id);
  const lastText = messages.length ? messages[messages.length - 1].content : "";
  // Follow new messages (and a streamed reply growing) unless the person scrolled up to read.
  useLayoutEffect(() => {
    const el = list.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [messages.length, lastText, chat.notices.length]);

  const send = () => {
    const chain: ChainElement[] = [];
    if (sessionType === "group" && atBot) chain.push({ type: "At", target: botAccountId });
    if (draft.text.trim()) chain.push({ type: "Plain", text: draft.text });
    if (draft.image) chain.push({ type: "Image", base64: draft.image });
    if (chat.send(chain, draft)) {
      setDraft({ text: "", image: null });
      setReturned(null);
      stick.current = true;
    }
  };

  const noticesAfter = (id: number) => chat.notices.filter((n) => n.afterId === id);
  return (
    <div className="chat-panel">
      <div className="chat-toolbar">
        <ConnectionStatus connection={chat.connection} onRetry={chat.reconnectNow} />
        <button
          type="button"
          className="btn btn-small"
          disabled={resetting}
          onClick={async () => {
            setResetting(true);
            setResetError(null);
            try {
              await chat.reset();
            } catch (e) {
              setResetError(e);
            } finally {
              setResetting(false);
            }
          }}
        >
          {t("chat.reset")}
        </button>
      </div>
      {resetError != null && (
        <p className="form-error" role="alert">
          {errorMessage(resetError)}
        </p>
      )}
      {/* The log role sits on a wrapper: on the list itself it would hide the list from assistive
          technology and orphan its items. */}
      <div
        ref={list}
        className="chat-log"
        role="log"
        aria-live="polite"
        aria-label={t("chat.logLabel", { mode: t(`chat.mode.${sessionType}`) })}
        tabIndex={0}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        <ol className="chat-items">
        {messages.length === 0 && chat.notices.length === 0 && (
          <li className="chat-empty muted">
            <p>{t("chat.intro")}</p>
            <p>{t(`chat.empty.${sessionType}`)}</p>
          </li>
        )}
        {noticesAfter(-1).map((n) => (
          <NoticeItem key={n.key} notice={n} />
        ))}
        {messages.map((m) => (
          <MessageWithNotices key={m.id} message={m} notices={noticesAfter(m.id)} />
        ))}
        </ol>
      </div>
      {returned && (
        <p className="notice notice-warn" role="alert">
          {returned}
        </p>
      )}
      <Composer
        value={draft}
        onChange={setDraft}
        onSend={send}
        canSend={connected}
        group={sessionType === "group"}
        atBot={atBot}
        onAtBot={setAtBot}
      />
    </div>
  );
}

function MessageWithNotices({
  message,
  notices,
}: {
  message: ChatMessage;
  notices: Notice[];
}) {
  return (
    <>
      <ChatBubble message={message} />
      {notices.map((n) => (
        <NoticeItem key={n.key} notice={n} />
      ))}
    </>
  );
}

function NoticeItem({ notice }: { notice: Notice }) {
  const { t } = useTranslation("pipelines");
  return (
    <li className={`chat-notice chat-notice-${notice.tone}`}>
      {notice.tone === "ignored" ? t("chat.ignored", { reason: notice.text }) : t("chat.error", { message: notice.text })}
    </li>
  );
}
