// Which plugins this pipeline uses: LangBot's extensions_preferences, which the server honours
// (docs/plugins.md "In the pipeline"): all plugins, or only the checked ones. A binding to a
// plugin that is no longer installed is listed so it can be dropped, never hidden.
import { useId } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { localize } from "../../i18n";
import { QueryState } from "../../components/PageState";
import { useInstalledPlugins } from "./queries";
import type { ExtensionsPreferences } from "./types";

type Ref = { author: string; name: string };
const idOf = (p: Ref) => `${p.author}/${p.name}`;

export function PluginBindings({
  value,
  onChange,
  error,
}: {
  value: ExtensionsPreferences;
  onChange: (v: ExtensionsPreferences) => void;
  error?: string;
}) {
  const { t, i18n } = useTranslation("pipelines");
  const id = useId();
  const plugins = useInstalledPlugins();
  const all = value.enable_all_plugins !== false;
  const bound: Ref[] = Array.isArray(value.plugins) ? value.plugins : [];
  const boundIds = new Set(bound.map(idOf));
  const toggle = (p: Ref, on: boolean) =>
    onChange({
      ...value,
      plugins: on ? [...bound, { author: p.author, name: p.name }] : bound.filter((b) => idOf(b) !== idOf(p)),
    });

  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{t("plugins.title")}</h3>
      <p className="muted">{t("plugins.help")}</p>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <div className="field field-check">
        <input
          id={`${id}-all`}
          type="checkbox"
          checked={all}
          onChange={(e) => onChange({ ...value, enable_all_plugins: e.target.checked, plugins: bound })}
        />
        <label htmlFor={`${id}-all`}>{t("plugins.all")}</label>
      </div>
      <QueryState query={plugins}>
        {(installed) => {
          const missing = bound.filter((b) => !installed.some((p) => idOf(p) === idOf(b)));
          if (installed.length === 0 && missing.length === 0) {
            return (
              <p className="muted">
                {t("plugins.none")} <Link to="/plugins">{t("plugins.install")}</Link>
              </p>
            );
          }
          return (
            <fieldset className="plugin-list" disabled={all}>
              <legend>{all ? t("plugins.listAll") : t("plugins.listSome")}</legend>
              {installed.map((p) => {
                const cid = `${id}-${idOf(p)}`;
                const description = localize(p.description, i18n.language);
                return (
                  <div key={idOf(p)} className="field field-check">
                    <input
                      id={cid}
                      type="checkbox"
                      checked={all || boundIds.has(idOf(p))}
                      onChange={(e) => toggle(p, e.target.checked)}
                    />
                    <label htmlFor={cid}>
                      {localize(p.label, i18n.language) || p.name} <span className="muted mono">{idOf(p)}</span>
                      {!p.enabled && <span className="badge badge-disabled">{t("plugins.disabled")}</span>}
                    </label>
                    {description && <p className="field-help">{description}</p>}
                  </div>
                );
              })}
              {missing.map((b) => {
                const cid = `${id}-missing-${idOf(b)}`;
                return (
                  <div key={idOf(b)} className="field field-check">
                    <input id={cid} type="checkbox" checked onChange={() => toggle(b, false)} />
                    <label htmlFor={cid}>
                      <span className="mono">{idOf(b)}</span>{" "}
                      <span className="badge badge-warning">{t("plugins.notInstalled")}</span>
                    </label>
                  </div>
                );
              })}
            </fieldset>
          );
        }}
      </QueryState>
    </section>
  );
}
