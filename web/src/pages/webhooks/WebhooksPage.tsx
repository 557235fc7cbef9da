// /webhooks: endpoints of your own that every message a running bot receives is pushed to, signed
// with the webhook's secret (docs/webhooks.md). The secret is shown whole once, when it is made
// (created or rotated); each row shows how the last push ended. Managing webhooks takes a
// signed-in user (the server refuses API keys here).
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { del, get, put } from "../../api/client";
import { PageHeader } from "../../app/Layout";
import { ConfirmDelete } from "../../components/Dialog";
import { Empty, QueryState } from "../../components/PageState";
import { ServerSwitch } from "../../components/ServerSwitch";
import { StatusBadge } from "../../components/StatusBadge";
import { RotateSecret } from "./RotateSecret";
import { SecretBanner } from "./SecretBanner";
import type { Webhook } from "./types";
import { WebhookDialog } from "./WebhookDialog";
import "./webhooks.css";

const queryKey = ["webhooks"];

export default function WebhooksPage() {
  const { t, i18n } = useTranslation("webhooks");
  const { t: tc } = useTranslation();
  const client = useQueryClient();
  // Deliveries change as messages arrive: read again every 10 s while the page is open.
  const hooks = useQuery({
    queryKey,
    queryFn: () => get<{ webhooks: Webhook[] }>("/webhooks").then((d) => d.webhooks),
    refetchInterval: 10_000,
  });
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Webhook | null>(null);
  const [secret, setSecret] = useState<{ webhook: Webhook; rotated: boolean } | null>(null);
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
      {secret && <SecretBanner webhook={secret.webhook} rotated={secret.rotated} onDismiss={() => setSecret(null)} />}
      <QueryState query={hooks}>
        {(list) =>
          list.length === 0 ? (
            <Empty>{t("empty")}</Empty>
          ) : (
            <div className="table-wrap">
              <table className="table table-cards">
                <thead>
                  <tr>
                    <th scope="col">{t("col.name")}</th>
                    <th scope="col">{t("col.secret")}</th>
                    <th scope="col">{t("col.delivery")}</th>
                    <th scope="col">{t("col.enabled")}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t("col.actions")}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((w) => {
                    const d = w.last_delivery;
                    return (
                      <tr key={w.id}>
                        <td data-label={t("col.name")}>
                          <strong>{w.name}</strong>
                          <div className="muted mono webhook-url">{w.url}</div>
                          {w.description && <div className="muted">{w.description}</div>}
                        </td>
                        <td className="nowrap" data-label={t("col.secret")}>
                          <span className="mono">{w.secret}</span>
                        </td>
                        <td className="webhook-delivery" data-label={t("col.delivery")}>
                          <StatusBadge status={d.status || "none"} />
                          {d.at && (
                            <p className="muted">
                              <time dateTime={d.at}>{when(d.at)}</time>
                              {d.http_status > 0 && ` · HTTP ${d.http_status}`}
                            </p>
                          )}
                          {d.status === "failed" && d.error && <p className="field-error">{d.error}</p>}
                          {d.deliveries > 0 && (
                            <p className="muted">{t("deliveries", { count: d.deliveries, failures: d.failures })}</p>
                          )}
                        </td>
                        <td data-label={t("col.enabled")}>
                          <ServerSwitch
                            checked={w.enabled}
                            label={t("enableNamed", { name: w.name })}
                            onToggle={async (next) => {
                              await put(`/webhooks/${w.id}`, { enabled: next });
                              await refresh();
                            }}
                            failureText={(m) => t("toggleFailed", { message: m })}
                          />
                        </td>
                        <td>
                          <div className="row row-actions webhook-actions">
                            <button
                              type="button"
                              className="btn btn-small"
                              aria-label={t("editNamed", { name: w.name })}
                              onClick={() => setEditing(w)}
                            >
                              {tc("edit")}
                            </button>
                            <RotateSecret
                              webhook={w}
                              onRotated={(rotated) => {
                                setSecret({ webhook: rotated, rotated: true });
                                void refresh();
                              }}
                            />
                            <ConfirmDelete
                              what={w.name}
                              triggerLabel={t("deleteNamed", { name: w.name })}
                              detail={t("deleteDetail")}
                              onConfirm={async () => {
                                await del(`/webhooks/${w.id}`);
                                if (secret?.webhook.id === w.id) setSecret(null);
                                await refresh();
                              }}
                            />
                          </div>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
      <WebhookDialog
        open={creating}
        onOpenChange={setCreating}
        onSaved={(created) => {
          setCreating(false);
          if (created) setSecret({ webhook: created, rotated: false });
          void refresh();
        }}
      />
      <WebhookDialog
        open={editing !== null}
        onOpenChange={(o) => !o && setEditing(null)}
        webhook={editing ?? undefined}
        onSaved={() => {
          setEditing(null);
          void refresh();
        }}
      />
    </>
  );
}
