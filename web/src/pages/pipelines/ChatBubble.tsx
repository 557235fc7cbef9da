// One debug-chat message drawn from its message chain: text, images (<img>), mentions, quotes,
// files. A reply still being streamed is marked busy so screen readers read it once, when done.
import { useTranslation } from "react-i18next";
import type { ChainElement, ChatMessage } from "./types";

function imageSource(e: ChainElement): string | undefined {
  if (e.base64) return e.base64.startsWith("data:") ? e.base64 : `data:image/png;base64,${e.base64}`;
  if (e.url && /^(https?:|data:image\/)/i.test(e.url)) return e.url;
  return undefined;
}

function Element({ element }: { element: ChainElement }) {
  const { t } = useTranslation("pipelines");
  switch (element.type) {
    case "Plain":
      return <span className="chat-text">{element.text}</span>;
    case "Image": {
      const src = imageSource(element);
      return src ? (
        <img className="chat-image" src={src} alt={t("chat.image")} loading="lazy" />
      ) : (
        <span className="muted">[{t("chat.image")}]</span>
      );
    }
    case "At":
      return <span className="chat-at">@{element.target} </span>;
    case "AtAll":
      return <span className="chat-at">@{t("chat.everyone")} </span>;
    case "Quote":
      return <span className="muted chat-quote">{t("chat.quote", { id: element.id ?? "" })} </span>;
    case "File":
      return element.url && /^https?:/i.test(element.url) ? (
        <a href={element.url} target="_blank" rel="noreferrer">
          {element.name || t("chat.file")}
        </a>
      ) : (
        <span className="muted">[{element.name || t("chat.file")}]</span>
      );
    case "Voice":
      return <span className="muted">[{t("chat.voice")}]</span>;
    default:
      return <span className="muted">[{element.type}]</span>;
  }
}

export function ChatBubble({ message }: { message: ChatMessage }) {
  const { t, i18n } = useTranslation("pipelines");
  const mine = message.role === "user";
  const chain = message.message_chain?.length ? message.message_chain : [{ type: "Plain", text: message.content }];
  const time = message.timestamp ? new Date(message.timestamp) : null;
  return (
    <li className={`chat-bubble ${mine ? "chat-user" : "chat-bot"}`} aria-busy={!message.is_final || undefined}>
      <div className="chat-meta">
        <span className="chat-who">{mine ? t("chat.you") : t("chat.bot")}</span>
        {time && !Number.isNaN(time.getTime()) && (
          <time dateTime={message.timestamp}>{time.toLocaleTimeString(i18n.language)}</time>
        )}
        {!message.is_final && <span className="chat-streaming">{t("chat.writing")}</span>}
      </div>
      <div className="chat-body">
        {chain
          .filter((e) => e.type !== "Source")
          .map((e, i) => (
            <Element key={i} element={e} />
          ))}
      </div>
    </li>
  );
}
