import { describe, expect, it } from "vitest";

// Every string the console shows exists in both languages: a key added in English only would show
// the raw key (or English) to a Chinese reader.
const files = import.meta.glob<{ default: Record<string, unknown> }>("../locales/*/*.json", { eager: true });

function keysOf(tree: Record<string, unknown>, prefix = ""): string[] {
  return Object.entries(tree).flatMap(([k, v]) =>
    v && typeof v === "object" ? keysOf(v as Record<string, unknown>, `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}

// i18next plural forms: English has _one and _other, Chinese only _other.
const normalise = (keys: string[]) => new Set(keys.filter((k) => !k.endsWith("_one")));

describe("locales", () => {
  const byNamespace: Record<string, Record<string, string[]>> = {};
  for (const [path, mod] of Object.entries(files)) {
    const [, lang, ns] = /locales\/([^/]+)\/([^/]+)\.json$/.exec(path)!;
    (byNamespace[ns] ??= {})[lang] = keysOf(mod.default);
  }

  it("has the same namespaces in English and Chinese", () => {
    for (const [ns, langs] of Object.entries(byNamespace)) expect(Object.keys(langs).sort(), ns).toEqual(["en", "zh"]);
  });

  for (const [ns, langs] of Object.entries(byNamespace)) {
    it(`${ns}: every English key has a Chinese string and no Chinese key is left over`, () => {
      expect([...normalise(langs.zh ?? [])].sort()).toEqual([...normalise(langs.en ?? [])].sort());
    });
  }
});
