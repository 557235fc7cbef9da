// Copies a value (a webhook URL, a new API key) and says so. Falls back to selecting a hidden
// textarea where the Clipboard API is unavailable (plain http on a LAN address).
import { useState } from "react";
import { useTranslation } from "react-i18next";

export function CopyButton({ value, label }: { value: string; label?: string }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      const area = document.createElement("textarea");
      area.value = value;
      document.body.appendChild(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button type="button" className="btn btn-small" onClick={copy} aria-label={label ?? t("copy")}>
      {copied ? t("copied") : t("copy")}
    </button>
  );
}
