// The debug chat's input: a labelled textarea (Enter sends, Shift+Enter starts a new line, an IME
// composition is never cut short), an optional image, and in group mode whether to @ the bot.
// While the connection is down, sending is disabled and the text stays where it is.
import { useId, useRef, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import { imageAsDataUrl } from "./imageFile";

export interface ComposerValue {
  text: string;
  image: string | null;
}

export function Composer({
  value,
  onChange,
  onSend,
  canSend,
  group,
  atBot,
  onAtBot,
}: {
  value: ComposerValue;
  onChange: (v: ComposerValue) => void;
  onSend: () => void;
  canSend: boolean;
  group: boolean;
  atBot: boolean;
  onAtBot: (on: boolean) => void;
}) {
  const { t } = useTranslation("pipelines");
  const id = useId();
  const fileInput = useRef<HTMLInputElement>(null);
  const [imageError, setImageError] = useState<string | null>(null);
  const empty = value.text.trim() === "" && !value.image;

  const submit = () => {
    if (canSend && !empty) onSend();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      submit();
    }
  };

  return (
    <form
      className="chat-composer"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <label htmlFor={`${id}-text`} className="chat-composer-label">
        {t("chat.message")}
      </label>
      <textarea
        id={`${id}-text`}
        rows={2}
        value={value.text}
        placeholder={t("chat.placeholder")}
        aria-describedby={`${id}-hint`}
        onChange={(e) => onChange({ ...value, text: e.target.value })}
        onKeyDown={onKeyDown}
      />
      <p id={`${id}-hint`} className="field-help">
        {canSend ? t("chat.hint") : t("chat.hintDisconnected")}
      </p>
      {value.image && (
        <div className="chat-attachment">
          <img src={value.image} alt={t("chat.attached")} />
          <button type="button" className="btn btn-small" onClick={() => onChange({ ...value, image: null })}>
            {t("chat.removeImage")}
          </button>
        </div>
      )}
      {imageError && (
        <p className="field-error" role="alert">
          {imageError}
        </p>
      )}
      <div className="chat-composer-actions">
        <input
          ref={fileInput}
          type="file"
          accept="image/*"
          hidden
          tabIndex={-1}
          aria-hidden="true"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            e.target.value = "";
            if (!file) return;
            setImageError(null);
            try {
              onChange({ ...value, image: await imageAsDataUrl(file) });
            } catch (err) {
              setImageError(
                (err as Error).message === "not an image" ? t("chat.notAnImage") : t("chat.imageTooLarge"),
              );
            }
          }}
        />
        <button type="button" className="btn btn-small" onClick={() => fileInput.current?.click()}>
          {value.image ? t("chat.replaceImage") : t("chat.attachImage")}
        </button>
        {group && (
          <span className="field-check chat-at-toggle">
            <input id={`${id}-at`} type="checkbox" checked={atBot} onChange={(e) => onAtBot(e.target.checked)} />
            <label htmlFor={`${id}-at`}>{t("chat.atBot")}</label>
          </span>
        )}
        <button type="submit" className="btn btn-primary" disabled={!canSend || empty}>
          {t("chat.send")}
        </button>
      </div>
    </form>
  );
}
