// The local agent's `knowledge-base-multi-selector`: the knowledge bases of the Knowledge page as
// checkboxes, in the order they were ticked (the order the agent retrieves in). A stored uuid of a
// base that no longer exists stays, ticked and flagged, until it is unticked: nothing an imported
// LangBot pipeline stored is dropped silently.
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { get } from "../../api/client";
import { errorMessage } from "../../components/PageState";

interface BaseChoice {
  uuid: string;
  name: string;
  emoji?: string;
}

export function storedBases(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v !== "") : [];
}

// Ticking appends (keeping the order of choice), unticking removes; every other entry stays.
export function toggleBase(stored: string[], uuid: string, on: boolean): string[] {
  const rest = stored.filter((s) => s !== uuid);
  return on ? [...rest, uuid] : rest;
}

export function KnowledgeBasesField({
  id,
  label,
  value,
  set,
}: {
  id: string;
  label: string;
  value: unknown;
  set: (v: string[]) => void;
}) {
  const { t } = useTranslation("pipelines");
  // Same key and read as the Knowledge page, so a base created there is offered here.
  const bases = useQuery({
    queryKey: ["knowledge", "bases"],
    queryFn: () => get<{ bases: BaseChoice[] }>("/knowledge/bases").then((d) => d.bases),
  });
  const stored = storedBases(value);
  const list = bases.data ?? [];
  const missing = bases.isSuccess ? stored.filter((s) => !list.some((b) => b.uuid === s)) : [];
  return (
    <>
      <div id={id} role="group" aria-label={label} aria-describedby={`${id}-kb`} className="kb-choices">
        {list.map((b) => (
          <label key={b.uuid} className="field-check">
            <input
              type="checkbox"
              checked={stored.includes(b.uuid)}
              onChange={(e) => set(toggleBase(stored, b.uuid, e.target.checked))}
            />
            {b.emoji ? `${b.emoji} ${b.name}` : b.name}
          </label>
        ))}
        {missing.map((uuid) => (
          <label key={uuid} className="field-check">
            <input type="checkbox" checked onChange={() => set(toggleBase(stored, uuid, false))} />
            {t("knowledge.missing", { uuid })}
          </label>
        ))}
      </div>
      <p id={`${id}-kb`} className="field-help">
        {bases.isPending ? (
          t("knowledge.loading")
        ) : bases.error ? (
          errorMessage(bases.error)
        ) : list.length === 0 ? (
          <>
            {t("knowledge.empty")} <Link to="/knowledge">{t("knowledge.create")}</Link>
          </>
        ) : null}
      </p>
    </>
  );
}
