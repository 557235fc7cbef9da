// /apikeys: the keys other programs use to call the API (X-API-Key). Listed masked; a new key is
// shown whole once, right after it is created. Managing keys takes a signed-in user (the server
// refuses API keys here).
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { del, get } from "../../api/client";
import { PageHeader } from "../../app/Layout";
import { ConfirmDelete } from "../../components/Dialog";
import { Empty, QueryState } from "../../components/PageState";
import { ApiKeyDialog } from "./ApiKeyDialog";
import { NewKeyBanner } from "./NewKeyBanner";
import type { ApiKey } from "./types";
import "./apikeys.css";

const queryKey = ["apikeys"];

export default function ApiKeysPage() {
  const { t, i18n } = useTranslation("apikeys");
  const { t: tc } = useTranslation();
  const client = useQueryClient();
  const keys = useQuery({ queryKey, queryFn: () => get<{ keys: ApiKey[] }>("/apikeys").then((d) => d.keys) });
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<ApiKey | null>(null);
  const [created, setCreated] = useState<ApiKey | null>(null);
  const refresh = () => client.invalidateQueries({ queryKey });
  const when = (iso: string) => new Date(iso).toLocaleString(i18n.language);

  return (
    <>
      <PageHeader
        title={t("title")}
        actions={
          <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            {t("new")}
          </button>
        }
      >
        <p className="muted">{t("intro")}</p>
      </PageHeader>
      {created && <NewKeyBanner apiKey={created} onDismiss={() => setCreated(null)} />}
      <QueryState query={keys}>
        {(list) =>
          list.length === 0 ? (
            <Empty>{t("empty")}</Empty>
          ) : (
            <div className="table-wrap">
              <table className="table table-cards">
                <thead>
                  <tr>
                    <th scope="col">{t("col.name")}</th>
                    <th scope="col">{t("col.description")}</th>
                    <th scope="col">{t("col.key")}</th>
                    <th scope="col">{t("col.created")}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t("col.actions")}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((k) => (
                    <tr key={k.id}>
                      <td data-label={t("col.name")}>
                        <strong>{k.name}</strong>
                      </td>
                      <td className="apikey-description" data-label={t("col.description")}>{k.description || <span className="muted">—</span>}</td>
                      <td className="nowrap" data-label={t("col.key")}>
                        <span className="mono">{k.key}</span>
                      </td>
                      <td className="nowrap" data-label={t("col.created")}>
                        <time dateTime={k.created_at}>{when(k.created_at)}</time>
                      </td>
                      <td>
                        <div className="row apikey-actions row-actions">
                          <button
                            type="button"
                            className="btn btn-small"
                            aria-label={t("editNamed", { name: k.name })}
                            onClick={() => setEditing(k)}
                          >
                            {tc("edit")}
                          </button>
                          <ConfirmDelete
                            what={k.name}
                            triggerLabel={t("deleteNamed", { name: k.name })}
                            detail={t("deleteDetail")}
                            onConfirm={async () => {
                              await del(`/apikeys/${k.id}`);
                              if (created?.id === k.id) setCreated(null);
                              await refresh();
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
      <ApiKeyDialog
        open={creating}
        onOpenChange={setCreating}
        onSaved={(key) => {
          setCreating(false);
          if (key) setCreated(key);
          void refresh();
        }}
      />
      <ApiKeyDialog
        open={editing !== null}
        onOpenChange={(o) => !o && setEditing(null)}
        apiKey={editing ?? undefined}
        onSaved={() => {
          setEditing(null);
          void refresh();
        }}
      />
    </>
  );
}
