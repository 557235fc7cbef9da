// One bot: its live status, the Enable switch, the webhook URL to copy, and two tabs: the event
// log (live) and the settings form. The path is /bot/<uuid>, never under /bots/ (webhook routes).
import * as Tabs from "@radix-ui/react-tabs";
import { useTranslation } from "react-i18next";
import { Link, useNavigate, useParams, useSearchParams } from "react-router";
import { ApiError, del } from "../../api/client";
import type { Bot } from "../../api/types";
import { PageHeader } from "../../app/Layout";
import { ConfirmDelete } from "../../components/Dialog";
import { ErrorState, Loading } from "../../components/PageState";
import { StatusBadge } from "../../components/StatusBadge";
import { localize } from "../../i18n";
import { BotForm } from "./BotForm";
import { WebhookUrlField } from "./customFields";
import { EnableSwitch } from "./EnableSwitch";
import { EventLog } from "./EventLog";
import { useAdapters, useBot, useInvalidateBots } from "./queries";
import "./bots.css";

export default function BotPage() {
  const { uuid = "" } = useParams();
  const { t } = useTranslation("bots");
  const bot = useBot(uuid, { live: true });
  if (bot.isPending) return <Loading />;
  // A bot deleted elsewhere answers 404 to the next poll: its page says so instead of going stale.
  const gone = bot.error instanceof ApiError && bot.error.status === 404;
  if (bot.error && (!bot.data || gone)) {
    return (
      <>
        <p>
          <Link to="/bots">← {t("backToList")}</Link>
        </p>
        <ErrorState error={bot.error} onRetry={() => bot.refetch()} />
      </>
    );
  }
  return <BotView bot={bot.data!} pollError={bot.error} />;
}

function BotView({ bot, pollError }: { bot: Bot; pollError: unknown }) {
  const { t, i18n } = useTranslation("bots");
  const navigate = useNavigate();
  const invalidate = useInvalidateBots();
  const adapters = useAdapters();
  const [search, setSearch] = useSearchParams();
  const tab = search.get("tab") === "settings" ? "settings" : "log";
  const adapter = adapters.data?.find((a) => a.name === bot.adapter);
  const webhook = bot.adapter_runtime_values;

  return (
    <>
      <p className="crumb">
        <Link to="/bots">← {t("backToList")}</Link>
      </p>
      <PageHeader
        title={bot.name}
        actions={
          <ConfirmDelete
            what={bot.name}
            detail={t("deleteDetail")}
            onConfirm={async () => {
              await del(`/platform/bots/${bot.uuid}`);
              await invalidate();
              navigate("/bots");
            }}
          />
        }
      >
        <p className="muted">{localize(adapter?.label, i18n.language) || bot.adapter}</p>
      </PageHeader>
      <section className="card bot-summary" aria-label={t("summary")}>
        <div className="bot-summary-row">
          <span className="bot-summary-label">{t("col.status")}</span>
          <span className="row">
            <StatusBadge status={bot.runtime.status} />
            <span className="muted">
              {t("since", { time: new Date(bot.runtime.since).toLocaleString() })}
            </span>
            {pollError != null && <span className="form-error">{t("pollFailed")}</span>}
          </span>
        </div>
        {bot.runtime.status === "error" && bot.runtime.error && (
          <p className="bot-error-full" role="alert">
            {bot.runtime.error}
          </p>
        )}
        <div className="bot-summary-row">
          <span className="bot-summary-label">{t("col.enable")}</span>
          <EnableSwitch bot={bot} showError />
        </div>
        {webhook && (
          <div className="bot-summary-row bot-webhook">
            <label className="bot-summary-label" htmlFor="bot-webhook-url">
              {t("webhookUrl")}
            </label>
            <div>
              <WebhookUrlField id="bot-webhook-url" url={webhook.webhook_full_url} extra={webhook.extra_webhook_full_url} />
              <p className="field-help">{t("webhookHelp")}</p>
            </div>
          </div>
        )}
        {webhook?.bot_account_id && (
          <div className="bot-summary-row">
            <span className="bot-summary-label">{t("account")}</span>
            <span className="mono">{webhook.bot_account_id}</span>
          </div>
        )}
      </section>
      <Tabs.Root
        value={tab}
        onValueChange={(v) => setSearch(v === "settings" ? { tab: "settings" } : {}, { replace: true })}
      >
        <Tabs.List className="tabs-list" aria-label={t("tabs")}>
          <Tabs.Trigger value="log">{t("tab.log")}</Tabs.Trigger>
          <Tabs.Trigger value="settings">{t("tab.settings")}</Tabs.Trigger>
        </Tabs.List>
        <Tabs.Content value="log">
          <EventLog uuid={bot.uuid} />
        </Tabs.Content>
        <Tabs.Content value="settings">
          <section className="card">
            <BotForm key={bot.uuid} bot={bot} />
          </section>
        </Tabs.Content>
      </Tabs.Root>
    </>
  );
}
