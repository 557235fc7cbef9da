// "Try retrieval": a question sent to POST /knowledge/bases/{uuid}/retrieve with the base's own
// retrieval settings, and the passages it returns, best first, with their file and score. What a
// pipeline using this base would give its model for the same message.
import { useMutation } from "@tanstack/react-query";
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { post } from "../../api/client";
import { FormError } from "../../components/PageState";
import { passageText, scoreOf } from "./knowledge";
import type { RetrievalResult } from "./types";

export function RetrievalBox({ baseUuid }: { baseUuid: string }) {
  const { t, i18n } = useTranslation("knowledge");
  const id = useId();
  const [query, setQuery] = useState("");
  const search = useMutation({
    mutationFn: (q: string) =>
      post<{ results: RetrievalResult[] }>(`/knowledge/bases/${baseUuid}/retrieve`, { query: q }).then((d) => d.results),
  });
  const score = new Intl.NumberFormat(i18n.language, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

  return (
    <section className="card stack" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{t("retrieve.title")}</h2>
      <p className="muted">{t("retrieve.intro")}</p>
      <form
        className="kb-retrieve"
        onSubmit={(e) => {
          e.preventDefault();
          if (query.trim()) search.mutate(query.trim());
        }}
      >
        <label htmlFor={`${id}-q`} className="visually-hidden">
          {t("retrieve.query")}
        </label>
        <input
          id={`${id}-q`}
          type="search"
          placeholder={t("retrieve.placeholder")}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="submit" className="btn btn-primary" disabled={!query.trim() || search.isPending}>
          {search.isPending ? t("retrieve.searching") : t("retrieve.search")}
        </button>
      </form>
      <FormError error={search.error} />
      {search.data && (
        <div aria-live="polite">
          {search.data.length === 0 ? (
            <p className="muted">{t("retrieve.none")}</p>
          ) : (
            <ol className="kb-results" aria-label={t("retrieve.results")}>
              {search.data.map((r) => {
                const s = scoreOf(r);
                return (
                  <li key={r.id} className="kb-result">
                    <div className="kb-result-head">
                      <span className="mono">{r.metadata.document_name ?? r.metadata.file_id ?? "—"}</span>
                      {s !== null && <span className="muted">{t("retrieve.score", { score: score.format(s) })}</span>}
                    </div>
                    <p className="kb-passage">{passageText(r)}</p>
                  </li>
                );
              })}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}
