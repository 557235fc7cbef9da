// The providers table: who answers model calls, where, and with how many keys (masked), and which
// models use each one. The server refuses to delete a provider models still use; the confirmation
// says so beforehand and shows the server's message if it refuses anyway.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { del } from "../../api/client";
import type { Provider } from "../../api/types";
import { ConfirmDelete } from "../../components/Dialog";
import { Empty, ErrorState, QueryState } from "../../components/PageState";
import { localize } from "../../i18n";
import { ProviderDialog } from "./ProviderDialog";
import { useInvalidateModels, useProviders, useRequesters } from "./queries";

export function ProvidersSection() {
  const { t, i18n } = useTranslation("models");
  const { t: tc } = useTranslation();
  const providers = useProviders();
  const requesters = useRequesters();
  const invalidate = useInvalidateModels();
  const [editing, setEditing] = useState<Provider | null>(null);
  const [creating, setCreating] = useState(false);
  const requesterLabel = (name: string) => {
    const r = requesters.data?.find((x) => x.name === name);
    return r ? localize(r.label, i18n.language) || name : name;
  };

  return (
    <section className="card" aria-labelledby="providers-title">
      <div className="mdl-head">
        <h2 id="providers-title">{t("providers.title")}</h2>
        <button
          type="button"
          className="btn btn-primary"
          disabled={!requesters.data}
          onClick={() => setCreating(true)}
        >
          {t("providers.new")}
        </button>
      </div>
      {requesters.error != null && <ErrorState error={requesters.error} onRetry={() => requesters.refetch()} />}
      <QueryState query={providers}>
        {(list) =>
          list.length === 0 ? (
            <Empty>{t("providers.empty")}</Empty>
          ) : (
            <div className="table-wrap">
              <table className="table table-cards">
                <thead>
                  <tr>
                    <th scope="col">{t("provider.name")}</th>
                    <th scope="col">{t("provider.requester")}</th>
                    <th scope="col">{t("provider.baseUrl")}</th>
                    <th scope="col">{t("provider.keys")}</th>
                    <th scope="col">{t("providers.models")}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t("actions")}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((p) => (
                    <tr key={p.uuid}>
                      <td data-label={t("provider.name")}>
                        <strong>{p.name}</strong>
                      </td>
                      <td data-label={t("provider.requester")}>
                        {requesterLabel(p.requester)}
                        <div className="muted mono mdl-small">{p.requester}</div>
                      </td>
                      <td className="mdl-break" data-label={t("provider.baseUrl")}>
                        <span className="mono mdl-small">{p.base_url}</span>
                      </td>
                      <td data-label={t("provider.keys")}>
                        {t("providers.keyCount", { count: p.api_keys.length })}
                        {p.api_keys.length > 0 && <div className="muted mono mdl-small">{p.api_keys.join(", ")}</div>}
                      </td>
                      <td className="nowrap" data-label={t("providers.models")}>
                        {t("providers.llmCount", { count: p.llm_count })}
                        <br />
                        {t("providers.embeddingCount", { count: p.embedding_count })}
                      </td>
                      <td>
                        <div className="row mdl-actions row-actions">
                          <button
                            type="button"
                            className="btn btn-small"
                            disabled={!requesters.data}
                            aria-label={t("providers.editNamed", { name: p.name })}
                            onClick={() => setEditing(p)}
                          >
                            {tc("edit")}
                          </button>
                          <ConfirmDelete
                            what={p.name}
                            triggerLabel={t("providers.deleteNamed", { name: p.name })}
                            detail={
                              p.llm_count + p.embedding_count > 0
                                ? t("providers.deleteInUse", { count: p.llm_count + p.embedding_count })
                                : undefined
                            }
                            onConfirm={async () => {
                              await del(`/provider/providers/${p.uuid}`);
                              await invalidate();
                            }}
                          />
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
      {requesters.data && (
        <>
          <ProviderDialog open={creating} onOpenChange={setCreating} requesters={requesters.data} />
          <ProviderDialog
            open={editing !== null}
            onOpenChange={(o) => !o && setEditing(null)}
            provider={editing ?? undefined}
            requesters={requesters.data}
          />
        </>
      )}
    </section>
  );
}
