// The bot rows, virtualised: only the rows in view (plus a few) are in the DOM, with spacer rows
// above and below keeping the scrollbar honest. The table keeps its semantics (header cells,
// rows, aria-rowcount) so a screen reader still hears a table.
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useRef } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { Bot } from "../../api/types";
import { StatusBadge } from "../../components/StatusBadge";
import type { BotRowView } from "./BotsPage";
import { EnableSwitch } from "./EnableSwitch";

const ROW_ESTIMATE = 58;

export function BotTable({ rows }: { rows: BotRowView[] }) {
  const { t } = useTranslation("bots");
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_ESTIMATE,
    overscan: 8,
    getItemKey: (index) => rows[index].bot.uuid,
  });
  const items = virtualizer.getVirtualItems();
  const top = items.length > 0 ? items[0].start : 0;
  const bottom = items.length > 0 ? virtualizer.getTotalSize() - items[items.length - 1].end : 0;
  return (
    <div ref={scrollRef} className="table-wrap bots-scroll" tabIndex={0} role="region" aria-label={t("tableLabel")}>
      <table className="table bots-table" aria-rowcount={rows.length + 1}>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col">{t("col.name")}</th>
            <th scope="col">{t("col.adapter")}</th>
            <th scope="col">{t("col.pipeline")}</th>
            <th scope="col">{t("col.status")}</th>
            <th scope="col">{t("col.enable")}</th>
          </tr>
        </thead>
        <tbody>
          {top > 0 && (
            <tr aria-hidden="true" className="spacer">
              <td colSpan={5} style={{ height: top }} />
            </tr>
          )}
          {items.map((item) => (
            <BotRow
              key={item.key}
              index={item.index}
              bot={rows[item.index].bot}
              adapterLabel={rows[item.index].adapterLabel}
              pipelineName={rows[item.index].pipelineName}
              measure={virtualizer.measureElement}
            />
          ))}
          {bottom > 0 && (
            <tr aria-hidden="true" className="spacer">
              <td colSpan={5} style={{ height: bottom }} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

// Memoised on its parts: react-query keeps an unchanged bot the same object between polls, so a
// poll re-renders only the rows whose bot changed.
const BotRow = memo(function BotRow({
  index,
  bot,
  adapterLabel,
  pipelineName,
  measure,
}: {
  index: number;
  bot: Bot;
  adapterLabel: string;
  pipelineName: string;
  measure: (el: Element | null) => void;
}) {
  const { t } = useTranslation("bots");
  return (
    <tr ref={measure} data-index={index} aria-rowindex={index + 2}>
      <td className="bot-name-cell">
        <Link to={`/bot/${bot.uuid}`}>{bot.name}</Link>
        {bot.description && <div className="muted bot-desc">{bot.description}</div>}
      </td>
      <td className="bot-adapter-cell" data-label={t("col.adapter")}>
        {adapterLabel}
      </td>
      <td className="bot-pipeline-cell" data-label={t("col.pipeline")}>
        {pipelineName || <span className="muted">{t("noPipeline")}</span>}
      </td>
      <td className="bot-status-cell">
        <StatusBadge status={bot.runtime.status} />
        {bot.runtime.status === "error" && bot.runtime.error && (
          <div className="bot-error" title={bot.runtime.error}>
            {bot.runtime.error}
          </div>
        )}
      </td>
      <td className="bot-enable-cell">
        <EnableSwitch bot={bot} />
      </td>
    </tr>
  );
});
