// The bot list: live runtime status (re-read every few seconds while the page is visible), an
// Enable switch per bot, and a filter. Rows are virtualised so 1,000 bots stay smooth.
import { useDeferredValue, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate } from "react-router";
import type { Bot } from "../../api/types";
import { PageHeader } from "../../app/Layout";
import { Dialog } from "../../components/Dialog";
import { Empty, ErrorState, Loading, errorMessage } from "../../components/PageState";
import { localize } from "../../i18n";
import { BotForm } from "./BotForm";
import { BotTable } from "./BotTable";
import { useAdapters, useBots, usePipelines } from "./queries";
import "./bots.css";

export interface BotRowView {
  bot: Bot;
  adapterLabel: string;
  pipelineName: string;
}

export default function BotsPage() {
  const { t, i18n } = useTranslation("bots");
  const navigate = useNavigate();
  const bots = useBots({ live: true });
  const adapters = useAdapters();
  const pipelines = usePipelines();
  const [creating, setCreating] = useState(false);
  const [text, setText] = useState("");
  const [status, setStatus] = useState("");
  const query = useDeferredValue(text.trim().toLowerCase());

  const rows = useMemo<BotRowView[]>(() => {
    const adapterLabels = new Map((adapters.data ?? []).map((a) => [a.name, localize(a.label, i18n.language) || a.name]));
    const pipelineNames = new Map((pipelines.data ?? []).map((p) => [p.uuid, p.name]));
    return (bots.data ?? [])
      .map((bot) => ({
        bot,
        adapterLabel: adapterLabels.get(bot.adapter) ?? bot.adapter,
        pipelineName: bot.use_pipeline_uuid ? (pipelineNames.get(bot.use_pipeline_uuid) ?? "") : "",
      }))
      .sort((a, b) => a.bot.name.localeCompare(b.bot.name));
  }, [bots.data, adapters.data, pipelines.data, i18n.language]);

  const visible = useMemo(
    () =>
      rows.filter(({ bot, adapterLabel }) => {
        if (status === "disabled" ? bot.enable : status && bot.runtime.status !== status) return false;
        if (!query) return true;
        return (
          bot.name.toLowerCase().includes(query) ||
          adapterLabel.toLowerCase().includes(query) ||
          bot.adapter.toLowerCase().includes(query) ||
          bot.runtime.status.includes(query)
        );
      }),
    [rows, query, status],
  );

  const counts = useMemo(() => {
    const c: Record<string, number> = {};
    for (const { bot } of rows) c[bot.runtime.status] = (c[bot.runtime.status] ?? 0) + 1;
    return c;
  }, [rows]);

  return (
    <>
      <PageHeader
        title={t("title")}
        actions={
          <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            {t("newBot")}
          </button>
        }
      >
        <p className="muted">{t("subtitle")}</p>
      </PageHeader>
      <Dialog open={creating} onOpenChange={setCreating} title={t("createTitle")} wide>
        <BotForm
          onSaved={(uuid) => {
            setCreating(false);
            navigate(`/bot/${uuid}`);
          }}
        />
      </Dialog>
      {bots.isPending ? (
        <Loading />
      ) : bots.error && !bots.data ? (
        <ErrorState error={bots.error} onRetry={() => bots.refetch()} />
      ) : rows.length === 0 ? (
        <Empty
          action={
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
              {t("newBot")}
            </button>
          }
        >
          {t("empty")}
        </Empty>
      ) : (
        <>
          <div className="bots-toolbar row" role="search">
            <div className="inline-field">
              <label htmlFor="bots-filter">{t("filter.label")}</label>
              <input
                id="bots-filter"
                type="search"
                value={text}
                placeholder={t("filter.placeholder")}
                onChange={(e) => setText(e.target.value)}
              />
            </div>
            <div className="inline-field">
              <label htmlFor="bots-status">{t("filter.status")}</label>
              <select id="bots-status" value={status} onChange={(e) => setStatus(e.target.value)}>
                <option value="">{t("filter.any", { count: rows.length })}</option>
                {(["running", "starting", "error", "stopped"] as const).map((s) => (
                  <option key={s} value={s}>
                    {t(`status.${s}`, { ns: "common" })} ({counts[s] ?? 0})
                  </option>
                ))}
                <option value="disabled">{t("filter.disabled")}</option>
              </select>
            </div>
            <span className="muted" aria-live="polite">
              {t("filter.shown", { shown: visible.length, total: rows.length })}
            </span>
            {bots.error && (
              <span className="form-error" role="status">
                {t("pollFailed", { message: errorMessage(bots.error) })}
              </span>
            )}
          </div>
          {visible.length === 0 ? <Empty>{t("filter.none")}</Empty> : <BotTable rows={visible} />}
        </>
      )}
    </>
  );
}
