// English and Simplified Chinese. Every page group keeps its strings in its own namespace file
// (locales/<lang>/<namespace>.json) so that pages can be changed without touching each other's
// strings. The language comes from the browser on first visit and from the picker afterwards.
import i18n from "i18next";
import LanguageDetector from "i18next-browser-languagedetector";
import { initReactI18next } from "react-i18next";

const modules = import.meta.glob<{ default: Record<string, unknown> }>("../locales/*/*.json", {
  eager: true,
});

const resources: Record<string, Record<string, Record<string, unknown>>> = {};
for (const [path, mod] of Object.entries(modules)) {
  const m = /locales\/([^/]+)\/([^/]+)\.json$/.exec(path);
  if (!m) continue;
  (resources[m[1]] ??= {})[m[2]] = mod.default;
}

export const languages = [
  { code: "en", label: "English" },
  { code: "zh", label: "简体中文" },
] as const;

void i18n
  .use(LanguageDetector)
  .use(initReactI18next)
  .init({
    resources,
    fallbackLng: "en",
    supportedLngs: ["en", "zh"],
    nonExplicitSupportedLngs: true,
    load: "languageOnly",
    defaultNS: "common",
    ns: Object.keys(resources.en ?? {}),
    interpolation: { escapeValue: false },
    detection: { order: ["localStorage", "navigator"], lookupLocalStorage: "switchboard.lang", caches: ["localStorage"] },
  });

// Screen readers and fonts follow the page's lang attribute; resources are bundled, so the first
// language is already chosen here, before the handler would see a change.
const setPageLanguage = (lng: string) => {
  if (typeof document === "undefined") return; // unit tests run without a page
  document.documentElement.lang = lng.startsWith("zh") ? "zh-CN" : "en";
};
i18n.on("languageChanged", setPageLanguage);
setPageLanguage(i18n.resolvedLanguage ?? i18n.language ?? "en");

// LangBot's localised schema text ({en_US, zh_Hans}) in the console's language.
export function localize(text: Record<string, string> | string | undefined, lang = i18n.language): string {
  if (!text) return "";
  if (typeof text === "string") return text;
  const zh = lang.startsWith("zh");
  return (zh ? text.zh_Hans ?? text.zh_CN : undefined) ?? text.en_US ?? Object.values(text)[0] ?? "";
}

export default i18n;
