import { useTranslation } from "react-i18next";

// A runtime or task status as a coloured, labelled badge (the colour is never the only signal).
export function StatusBadge({ status, title }: { status: string; title?: string }) {
  const { t } = useTranslation();
  return (
    <span className={`badge badge-${status}`} title={title}>
      {t(`status.${status}`, { defaultValue: status })}
    </span>
  );
}
