// A modal dialog (Radix: focus trap, Escape, labelled by its title) and the in-page delete
// confirmation every list uses instead of the browser's confirm().
import * as AlertDialog from "@radix-ui/react-alert-dialog";
import * as RadixDialog from "@radix-ui/react-dialog";
import { useRef, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "./PageState";

export function Dialog({
  open,
  onOpenChange,
  title,
  description,
  children,
  wide,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: string;
  children: ReactNode;
  wide?: boolean;
}) {
  const { t } = useTranslation();
  // Opened by state rather than a Radix Trigger, so Radix does not know where focus came from:
  // remember it, and give it back on close (otherwise focus falls to the page's body).
  const opener = useRef<HTMLElement | null>(null);
  return (
    <RadixDialog.Root open={open} onOpenChange={onOpenChange}>
      <RadixDialog.Portal>
        <RadixDialog.Overlay className="overlay" />
        <RadixDialog.Content
          className={wide ? "dialog dialog-wide" : "dialog"}
          aria-describedby={undefined}
          onOpenAutoFocus={() => {
            opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
          }}
          onCloseAutoFocus={(e) => {
            if (opener.current?.isConnected) {
              e.preventDefault();
              opener.current.focus();
            }
          }}
        >
          <div className="dialog-head">
            <RadixDialog.Title>{title}</RadixDialog.Title>
            <RadixDialog.Close className="btn btn-ghost" aria-label={t("close")}>
              ×
            </RadixDialog.Close>
          </div>
          {description && <RadixDialog.Description className="muted">{description}</RadixDialog.Description>}
          {children}
        </RadixDialog.Content>
      </RadixDialog.Portal>
    </RadixDialog.Root>
  );
}

// A "Delete" trigger button that opens an in-page confirmation whose confirm button is also named
// Delete. `onConfirm` may throw: the dialog stays open and shows the server's message.
export function ConfirmDelete({
  what,
  detail,
  onConfirm,
  triggerLabel,
  disabled,
}: {
  what: string;
  detail?: string;
  onConfirm: () => Promise<unknown>;
  triggerLabel?: string;
  disabled?: boolean;
}) {
  const { t } = useTranslation();
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
        <button type="button" className="btn btn-danger" disabled={disabled} aria-label={triggerLabel ?? t("delete")}>
          {t("delete")}
        </button>
      </AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="overlay" />
        <AlertDialog.Content className="dialog">
          <AlertDialog.Title>{t("confirmDelete.title", { what })}</AlertDialog.Title>
          <AlertDialog.Description className="muted">{detail ?? t("confirmDelete.body")}</AlertDialog.Description>
          {error != null && (
            <p className="form-error" role="alert">
              {errorMessage(error)}
            </p>
          )}
          <div className="dialog-actions">
            <AlertDialog.Cancel className="btn">{t("cancel")}</AlertDialog.Cancel>
            <button
              type="button"
              className="btn btn-danger"
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                setError(null);
                try {
                  await onConfirm();
                  setOpen(false);
                } catch (e) {
                  setError(e);
                } finally {
                  setBusy(false);
                }
              }}
            >
              {t("delete")}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
