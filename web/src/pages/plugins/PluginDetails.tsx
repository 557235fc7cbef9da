import { useTranslation } from "react-i18next";
import type { Plugin } from "./types";

function safeUrl(url: string): string | null {
  return /^https?:\/\//i.test(url) ? url : null;
}

// The facts about the installed package, and what the running process offered in its handshake.
export function PluginDetails({ plugin }: { plugin: Plugin }) {
  const { t, i18n } = useTranslation("plugins");
  const date = (s: string) => (s ? new Date(s).toLocaleString(i18n.language) : "—");
  const repository = safeUrl(plugin.manifest?.repository ?? "");
  const caps = plugin.capabilities ?? {};
  const commands = caps.commands ?? [];
  const tools = caps.tools ?? [];
  const events = caps.events ?? [];
  return (
    <section className="card" aria-labelledby="plugin-details">
      <h2 id="plugin-details">{t("details.title")}</h2>
      <dl className="plugin-facts">
        <dt>{t("details.author")}</dt>
        <dd className="mono">{plugin.author}</dd>
        <dt>{t("details.name")}</dt>
        <dd className="mono">{plugin.name}</dd>
        <dt>{t("details.version")}</dt>
        <dd>{plugin.version}</dd>
        <dt>{t("details.source")}</dt>
        <dd>{t(`source.${plugin.install_source}`, { defaultValue: plugin.install_source })}</dd>
        <dt>{t("details.installed")}</dt>
        <dd>{date(plugin.created_at)}</dd>
        <dt>{t("details.updated")}</dt>
        <dd>{date(plugin.updated_at)}</dd>
        <dt>{t("details.priority")}</dt>
        <dd>{plugin.priority}</dd>
        {repository && (
          <>
            <dt>{t("details.repository")}</dt>
            <dd>
              <a href={repository} target="_blank" rel="noopener noreferrer nofollow" className="plugins-break">
                {repository}
              </a>
            </dd>
          </>
        )}
      </dl>
      <h3>{t("details.offers")}</h3>
      {plugin.status !== "running" ? (
        <p className="muted">{t("details.offersWhenRunning")}</p>
      ) : commands.length + tools.length + events.length === 0 ? (
        <p className="muted">{t("details.offersNothing")}</p>
      ) : (
        <dl className="plugin-facts">
          {commands.length > 0 && (
            <>
              <dt>{t("details.commands")}</dt>
              <dd>
                <ul className="plugins-plain-list">
                  {commands.map((c) => (
                    <li key={c.name}>
                      <code>!{c.name}</code> {c.description && <span className="muted">{c.description}</span>}
                    </li>
                  ))}
                </ul>
              </dd>
            </>
          )}
          {tools.length > 0 && (
            <>
              <dt>{t("details.tools")}</dt>
              <dd>
                <ul className="plugins-plain-list">
                  {tools.map((c) => (
                    <li key={c.name}>
                      <code>{c.name}</code> {c.description && <span className="muted">{c.description}</span>}
                    </li>
                  ))}
                </ul>
              </dd>
            </>
          )}
          {events.length > 0 && (
            <>
              <dt>{t("details.events")}</dt>
              <dd className="mono">{events.join(", ")}</dd>
            </>
          )}
        </dl>
      )}
    </section>
  );
}
