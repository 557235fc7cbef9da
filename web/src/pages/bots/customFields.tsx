// The adapter schema's custom item types, drawn honestly: the webhook URL is real (the server
// gives it once the bot exists), and so is the web page bot's embed code, computed from it (the
// widget script lives under the bot's URL); the DingTalk QR login and its card template download
// need server support Switchboard does not have yet, so they say so.
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import type { Bot, SchemaItem } from "../../api/types";
import { CopyButton } from "../../components/CopyButton";

export function useRenderCustom(bot: Bot | undefined) {
  const { t } = useTranslation("bots");
  return (item: SchemaItem, _value: unknown, _set: (v: unknown) => void, id: string): ReactNode | undefined => {
    switch (item.type) {
      case "webhook-url": {
        const url = bot?.adapter_runtime_values?.webhook_full_url;
        if (!url) {
          return (
            <output id={id} className="muted">
              {t("form.webhookAfterSave")}
            </output>
          );
        }
        return <WebhookUrlField id={id} url={url} extra={bot?.adapter_runtime_values?.extra_webhook_full_url} />;
      }
      case "download-link":
        return (
          <output id={id} className="notice">
            {t("form.downloadUnsupported")}
          </output>
        );
      case "embed-code": {
        const url = bot?.adapter_runtime_values?.webhook_full_url;
        if (!url) {
          return (
            <output id={id} className="muted">
              {t("form.embedAfterSave")}
            </output>
          );
        }
        return <EmbedCodeField id={id} botUrl={url} />;
      }
      case "qr-code-login":
        return (
          <output id={id} className="notice">
            {t("form.qrUnsupported")}
          </output>
        );
      default:
        return undefined;
    }
  };
}

// A read-only URL with a copy button; used in the form and in the bot page's header.
export function WebhookUrlField({ id, url, extra }: { id?: string; url: string; extra?: string }) {
  const { t } = useTranslation("bots");
  return (
    <div className="stack-tight">
      <div className="url-row">
        <input id={id} className="mono" readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton value={url} label={t("copyWebhook")} />
      </div>
      {extra ? (
        <div className="url-row">
          <input
            className="mono"
            readOnly
            value={extra}
            aria-label={t("extraWebhook")}
            onFocus={(e) => e.currentTarget.select()}
          />
          <CopyButton value={extra} label={t("copyExtraWebhook")} />
        </div>
      ) : null}
    </div>
  );
}

// The web page bot's snippet (its widget script) and its full-page chat, both under the bot's URL.
export function EmbedCodeField({ id, botUrl }: { id?: string; botUrl: string }) {
  const { t } = useTranslation("bots");
  const snippet = `<script src="${botUrl}/widget.js" async></script>`;
  const page = `${botUrl}/chat`;
  return (
    <div className="stack-tight">
      <div className="url-row">
        <input id={id} className="mono" readOnly value={snippet} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton value={snippet} label={t("copyEmbed")} />
      </div>
      <div className="url-row">
        <input
          className="mono"
          readOnly
          value={page}
          aria-label={t("embedPage")}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton value={page} label={t("copyEmbedPage")} />
      </div>
    </div>
  );
}
