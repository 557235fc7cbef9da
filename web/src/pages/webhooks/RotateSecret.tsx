// "Rotate secret": after a confirmation, PUT {rotate_secret: true}; the new secret comes back in
// that answer only. Receivers checking the old one refuse pushes until they get the new one.
import * as AlertDialog from "@radix-ui/react-alert-dialog";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { put } from "../../api/client";
import { FormError } from "../../components/PageState";
import type { Webhook } from "./types";

export function RotateSecret({ webhook, onRotated }: { webhook: Webhook; onRotated: (w: Webhook) => void }) {
  const { t } = useTranslation("webhooks");
  const { t: tc } = useTranslation();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <AlertDialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (!o) setError(null);
      }}
    >
      <AlertDialog.Trigger asChild>
        <button type="button" className="btn btn-small" aria-label={t("rotateNamed", { name: webhook.name })}>
          {t("rotate.button")}
        </button>
      </AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="overlay" />
        <AlertDialog.Content className="dialog">
          <AlertDialog.Title>{t("rotate.title", { name: webhook.name })}</AlertDialog.Title>
          <AlertDialog.Description className="muted">{t("rotate.body")}</AlertDialog.Description>
          <FormError error={error} />
          <div className="dialog-actions">
            <AlertDialog.Cancel className="btn">{tc("cancel")}</AlertDialog.Cancel>
            <button
              type="button"
              className="btn btn-primary"
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                setError(null);
                try {
                  const data = await put<{ webhook: Webhook }>(`/webhooks/${webhook.id}`, { rotate_secret: true });
                  setOpen(false);
                  onRotated(data.webhook);
                } catch (e) {
                  setError(e);
                } finally {
                  setBusy(false);
                }
              }}
            >
              {t("rotate.confirm")}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
